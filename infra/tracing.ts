/**
 * Tracing: the trace viewer (Langfuse v4 web + worker) with its analytics-db (ClickHouse), object-store
 * (MinIO) and the one-shot object-store-init that creates the bucket.
 */
import type * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { HOST_PORTS } from "./config.js";
import { type ServiceSpec, serviceContainer } from "./container.js";
import { type ServiceComponentArgs, type ServiceFacts, urlEncoded } from "./datastores.js";
import { IMAGES } from "./images.js";

/** Bucket of the trace viewer's event uploads. */
export const TRACE_BUCKET = "langfuse";
/** Root user of object-store and user of analytics-db. */
export const TRACE_STORE_USER = "platform";
/** Organisation and project the trace viewer creates headlessly; the gateway's keys belong to that project. */
export const TRACE_PROJECT_ID = "platform";

/**
 * `bucket`, once the one-shot `init` container has exited 0. The provider waits for a one-shot container to
 * end (attach) and records its exit code without failing (no mustRun), so the check is here: a non-zero code
 * rejects this output, the containers that take the bucket from it are not created, and `pulumi up` fails with
 * the message. Unknown during a first preview (the container has not run yet).
 * @throws Error (in the output) naming the container, its exit code and how to retry.
 */
export function createdBucket(init: docker.Container, bucket: string): pulumi.Output<string> {
  return init.exitCode.apply((code) => {
    if (code !== 0)
      throw new Error(
        `object-store-init exited with code ${code}: bucket ${bucket} was not created, so the trace viewer is ` +
          "not started. Read `docker logs object-store-init`, fix the cause, then run " +
          "`docker rm object-store-init` and `pulumi up --refresh` to create the bucket again.",
      );
    return bucket;
  });
}

/** Inputs of {@link Tracing}. */
export interface TracingArgs extends ServiceComponentArgs, TraceLinks {
  /** Containers the trace viewer needs healthy first (relational-db, cache). */
  dependsOn: pulumi.Resource[];
}

/** The analytics database (ClickHouse), both renderers. */
export function analyticsDbSpec(base: ServiceFacts): ServiceSpec {
  const { config, secrets } = base;
  const img = config.images;
  return {
    name: "analytics-db",
    image: { pull: img.clickhouse, tools: IMAGES.clickhouse.tools },
    env: {
      CLICKHOUSE_DB: "default",
      CLICKHOUSE_USER: TRACE_STORE_USER,
      CLICKHOUSE_PASSWORD: secrets.analyticsDbPassword,
      TZ: "UTC",
    },
    volumes: { data: "/var/lib/clickhouse", logs: "/var/log/clickhouse-server" },
    ulimits: [{ name: "nofile", soft: 262144, hard: 262144 }],
    // The image's clickhouse user (Langfuse's compose runs it so); the image leaves its data, log and config
    // folders writable for it, and a volume first written by a root start is owned by it already.
    user: "101:101",
    memoryMb: config.stack.analyticsDbMemoryMb,
    healthcheck: { test: ["CMD", "wget", "-q", "--spider", "http://127.0.0.1:8123/ping"], interval: "10s" },
    waitHealthy: true,
  };
}

/** The object store (MinIO), both renderers. */
export function objectStoreSpec(base: ServiceFacts): ServiceSpec {
  const { config, secrets } = base;
  const img = config.images;
  return {
    name: "object-store",
    image: { pull: img.minio, tools: IMAGES.minio.tools },
    env: { MINIO_ROOT_USER: TRACE_STORE_USER, MINIO_ROOT_PASSWORD: secrets.objectStorePassword },
    command: ["server", "/data", "--address", ":9000", "--console-address", ":9001"],
    volumes: { data: "/data" },
    healthcheck: {
      test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:9000/minio/health/live"],
      interval: "10s",
    },
    waitHealthy: true,
  };
}

/** The one-shot bucket creation (`mc mb`), both renderers. */
export function objectStoreInitSpec(base: ServiceFacts): ServiceSpec {
  const { config, secrets } = base;
  const img = config.images;
  return {
    name: "object-store-init",
    image: { pull: img.minioClient, tools: IMAGES.minioClient.tools },
    env: {
      MC_HOST_store: pulumi.interpolate`http://${TRACE_STORE_USER}:${urlEncoded(secrets.objectStorePassword)}@object-store:9000`,
    },
    command: ["mb", "--ignore-existing", `store/${TRACE_BUCKET}`],
    oneShot: true,
  };
}

/** Where the trace viewer keeps its data. */
export interface TraceLinks {
  traceDatabaseUrl: pulumi.Input<string>;
  /** Redis URL of cache (Langfuse keeps its queues there under its own key prefix). */
  redisUrl: pulumi.Input<string>;
}

/**
 * Settings web and worker share (Langfuse's compose gives both one env block; the worker builds links in
 * notifications and exports from NEXTAUTH_URL). `bucket`: the event upload bucket, once it exists.
 */
export function traceCommonEnv(
  base: ServiceFacts,
  links: TraceLinks,
  bucket: pulumi.Input<string>,
): Record<string, pulumi.Input<string>> {
  const { config, secrets } = base;
  // Settings web and worker share (Langfuse's compose gives both one env block; the worker builds links in
  // notifications and exports from NEXTAUTH_URL).
  return {
    NEXTAUTH_URL: config.urls.trace,
    DATABASE_URL: links.traceDatabaseUrl,
    SALT: secrets.traceSalt,
    ENCRYPTION_KEY: secrets.traceEncryptionKey,
    CLICKHOUSE_URL: "http://analytics-db:8123",
    CLICKHOUSE_MIGRATION_URL: "clickhouse://analytics-db:9000",
    CLICKHOUSE_USER: TRACE_STORE_USER,
    CLICKHOUSE_PASSWORD: secrets.analyticsDbPassword,
    CLICKHOUSE_CLUSTER_ENABLED: "false",
    REDIS_CONNECTION_STRING: links.redisUrl,
    REDIS_KEY_PREFIX: "langfuse:",
    // Taken from the init's exit code: a failed bucket creation keeps web and worker from being created.
    LANGFUSE_S3_EVENT_UPLOAD_BUCKET: bucket,
    LANGFUSE_S3_EVENT_UPLOAD_REGION: "auto",
    LANGFUSE_S3_EVENT_UPLOAD_ACCESS_KEY_ID: TRACE_STORE_USER,
    LANGFUSE_S3_EVENT_UPLOAD_SECRET_ACCESS_KEY: secrets.objectStorePassword,
    LANGFUSE_S3_EVENT_UPLOAD_ENDPOINT: "http://object-store:9000",
    LANGFUSE_S3_EVENT_UPLOAD_FORCE_PATH_STYLE: "true",
    LANGFUSE_S3_EVENT_UPLOAD_PREFIX: "events/",
    TELEMETRY_ENABLED: "false",
    HOSTNAME: "0.0.0.0",
  };
}

/** The trace viewer's web app (Langfuse web), both renderers. */
export function traceWebSpec(base: ServiceFacts, common: Record<string, pulumi.Input<string>>): ServiceSpec {
  const { config, secrets } = base;
  const img = config.images;
  return {
    name: "trace-web",
    image: { pull: img.langfuseWeb, tools: IMAGES.langfuseWeb.tools },
    env: {
      ...common,
      NEXTAUTH_SECRET: secrets.traceNextauthSecret,
      AUTH_DISABLE_SIGNUP: "true",
      LANGFUSE_INIT_ORG_ID: TRACE_PROJECT_ID,
      LANGFUSE_INIT_ORG_NAME: "Platform",
      LANGFUSE_INIT_PROJECT_ID: TRACE_PROJECT_ID,
      LANGFUSE_INIT_PROJECT_NAME: "Gateway",
      LANGFUSE_INIT_PROJECT_PUBLIC_KEY: secrets.tracePublicKey,
      LANGFUSE_INIT_PROJECT_SECRET_KEY: secrets.traceSecretKey,
      LANGFUSE_INIT_USER_EMAIL: config.stack.traceAdminEmail,
      LANGFUSE_INIT_USER_NAME: "Admin",
      LANGFUSE_INIT_USER_PASSWORD: secrets.traceInitUserPassword,
    },
    publish: [{ internal: 3000, external: HOST_PORTS["trace-web"] }],
    // Migrations take 2–3 minutes on first start.
    healthcheck: {
      test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:3000/api/public/health"],
      startPeriod: "180s",
    },
  };
}

/** The trace viewer's worker (Langfuse worker), both renderers. */
export function traceWorkerSpec(
  base: ServiceFacts,
  common: Record<string, pulumi.Input<string>>,
): ServiceSpec {
  const { config } = base;
  const img = config.images;
  return {
    name: "trace-worker",
    image: { pull: img.langfuseWorker, tools: IMAGES.langfuseWorker.tools },
    env: common,
    memoryMb: config.stack.traceWorkerMemoryMb,
    healthcheck: {
      test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:3030/api/health"],
      startPeriod: "120s",
    },
  };
}

/** Component `platform:tracing:Tracing`. */
export class Tracing extends pulumi.ComponentResource {
  /** Address the gateway sends traces to, inside the network. */
  readonly internalUrl = `http://trace-web:3000`;
  readonly containers: docker.Container[];

  constructor(name: string, args: TracingArgs, opts?: pulumi.ComponentResourceOptions) {
    super("platform:tracing:Tracing", name, {}, opts);
    const { ctx } = args;

    const analytics = serviceContainer(this, ctx, {
      ...analyticsDbSpec(args),
    });

    const objectStore = serviceContainer(this, ctx, {
      ...objectStoreSpec(args),
    });

    // `mc` reads MC_HOST_<alias> as a full alias definition: one command, no shell, no config file.
    const objectStoreInit = serviceContainer(this, ctx, {
      ...objectStoreInitSpec(args),
      dependsOn: [objectStore.container],
    });

    const common = traceCommonEnv(args, args, createdBucket(objectStoreInit.container, TRACE_BUCKET));
    const dependsOn = [...args.dependsOn, analytics.container, objectStoreInit.container];

    const web = serviceContainer(this, ctx, {
      ...traceWebSpec(args, common),
      dependsOn,
    });

    const worker = serviceContainer(this, ctx, {
      ...traceWorkerSpec(args, common),
      dependsOn,
    });

    this.containers = [
      analytics.container,
      objectStore.container,
      objectStoreInit.container,
      web.container,
      worker.container,
    ];
    this.registerOutputs({});
  }
}
