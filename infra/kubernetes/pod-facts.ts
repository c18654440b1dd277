/**
 * What the Kubernetes renderer needs beyond a service's description (infra/*.ts `…Spec` functions): the
 * per-replica sizing, the numeric user the image runs as, whether its root filesystem can be read-only (then
 * the scratch folders it writes to), the ports of services that publish none on Docker, and env that only a
 * cluster needs. Users come from each image's Dockerfile (USER, or the user its entrypoint steps down to), each
 * with its upstream source in docs/deploy-contracts.md ("Users on Kubernetes").
 */
import type { ServiceName } from "../config.js";

/** Kubernetes-only facts of one service. */
export interface PodFacts {
  /** Memory limit per replica (MiB) when the service description gives none; the request is half. */
  memoryMb: number;
  /** CPU request per replica (millicores); the limit is four times it. */
  cpuMillis: number;
  /** Numeric user of the image. */
  uid: number;
  /** Read-only root filesystem; writes go to `scratch` (emptyDir) and the data volumes. */
  readOnlyRoot?: boolean;
  scratch?: Record<string, string>;
  /** Service port when the Docker description publishes none. */
  port?: number;
  extraPorts?: readonly number[];
  /** Env only the cluster needs (never a secret). */
  env?: Record<string, string>;
  /** PVC size per data volume, GiB. */
  volumeGi?: number;
}

/** Where the gateway spools spend rows Postgres has not taken (an emptyDir: survives a container restart). */
export const GATEWAY_SPOOL_DIR = "/var/spool/gateway";

/** Facts per service (object-store-init runs as a Job; it takes the same table). */
export const POD_FACTS: Record<ServiceName, PodFacts> = {
  gateway: {
    memoryMb: 1024,
    cpuMillis: 500,
    uid: 1000,
    readOnlyRoot: true,
    scratch: { tmp: "/tmp", spool: GATEWAY_SPOOL_DIR },
    // One process per pod: the cluster scales by replicas (HorizontalPodAutoscaler), not GATEWAY_WORKERS.
    // Migrations run once per rollout in the `gateway-migrate` Job; a replica only checks none is pending.
    env: { GATEWAY_SPOOL_DIR, GATEWAY_WORKERS: "1", GATEWAY_RUN_MIGRATIONS: "false" },
  },
  console: { memoryMb: 512, cpuMillis: 100, uid: 1000, readOnlyRoot: true, scratch: { tmp: "/tmp" } },
  chat: { memoryMb: 1024, cpuMillis: 250, uid: 1000, volumeGi: 5 },
  scanner: { memoryMb: 2048, cpuMillis: 500, uid: 1000, port: 8000, volumeGi: 5, scratch: { tmp: "/tmp" } },
  "pii-analyzer": { memoryMb: 2048, cpuMillis: 250, uid: 1001, port: 3000 },
  "pii-anonymizer": { memoryMb: 512, cpuMillis: 100, uid: 1001, port: 3000 },
  "trace-web": { memoryMb: 1536, cpuMillis: 250, uid: 1001 },
  "trace-worker": { memoryMb: 1536, cpuMillis: 250, uid: 1001 },
  // Postgres writes its data into a subfolder: a fresh volume's root holds lost+found, which initdb refuses.
  "relational-db": {
    memoryMb: 1024,
    cpuMillis: 250,
    uid: 999,
    port: 5432,
    volumeGi: 20,
    env: { PGDATA: "/var/lib/postgresql/data/pgdata" },
    scratch: { run: "/var/run/postgresql" },
  },
  "document-db": { memoryMb: 1024, cpuMillis: 250, uid: 999, port: 27017, volumeGi: 20 },
  cache: { memoryMb: 512, cpuMillis: 100, uid: 999, port: 6379, volumeGi: 5 },
  "analytics-db": { memoryMb: 3072, cpuMillis: 500, uid: 101, port: 8123, extraPorts: [9000], volumeGi: 50 },
  "object-store": { memoryMb: 1024, cpuMillis: 100, uid: 65532, port: 9000, volumeGi: 50 },
  "object-store-init": { memoryMb: 128, cpuMillis: 50, uid: 65532, readOnlyRoot: false },
  metrics: { memoryMb: 2048, cpuMillis: 250, uid: 65534, readOnlyRoot: true, volumeGi: 20 },
  alertmanager: { memoryMb: 256, cpuMillis: 50, uid: 65534, readOnlyRoot: true, volumeGi: 1 },
  dashboards: { memoryMb: 512, cpuMillis: 100, uid: 472, volumeGi: 5 },
  "relational-db-exporter": { memoryMb: 128, cpuMillis: 50, uid: 65534, readOnlyRoot: true, port: 9187 },
  // redis_exporter's Dockerfile: `USER 59000:59000` in both the scratch and the alpine variants.
  "cache-exporter": { memoryMb: 128, cpuMillis: 50, uid: 59000, readOnlyRoot: true, port: 9121 },
};
