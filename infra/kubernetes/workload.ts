/**
 * The Kubernetes renderer of one service: a Deployment (or a StatefulSet with PersistentVolumeClaims when the
 * service has data volumes) and its ClusterIP Service, as plain API objects. It takes the same health check,
 * volumes and memory cap the Docker renderer (infra/container.ts) takes; secret values never appear as env
 * literals, only as `secretKeyRef`s to the service's Secret.
 * Source of the object shapes: Kubernetes API reference (apps/v1 Deployment, StatefulSet; core/v1 Service).
 */
import type * as pulumi from "@pulumi/pulumi";
import type { HealthCheck } from "../container.js";
import { type Probe, probeFor, startupProbeFor } from "./probes.js";

/** What the renderer needs to know about a service. */
export interface WorkloadSpec {
  /** Service name (DNS label): object name, `app.kubernetes.io/name` label and Service host name. */
  name: string;
  /** Image reference (a pinned third-party reference, or our image's digest in the operator's registry). */
  image: pulumi.Input<string>;
  /** Container port the Service exposes; none for workers. */
  port?: number;
  /** Further ports the Service exposes (e.g. ClickHouse's native 9000 beside HTTP 8123). */
  extraPorts?: readonly number[];
  /** Container command (Docker's entrypoint) and arguments (Docker's command). */
  command?: readonly string[];
  args?: readonly pulumi.Input<string>[];
  /**
   * Files mounted read-only one by one (subPath): container path → key in the ConfigMap `<name>-files`, or
   * in the Secret `<name>-files` for files with a secret in them.
   */
  files?: Record<string, string>;
  secretFiles?: Record<string, string>;
  /** Service account whose token the pod mounts (Prometheus's pod discovery); none otherwise. */
  serviceAccount?: string;
  /** Plain settings (never secrets). */
  env?: Record<string, string>;
  /** Secret settings: env name → key in the Secret named `<name>-env`. */
  secretEnv?: readonly string[];
  healthcheck: HealthCheck;
  /** Readiness path on the health check's port when it differs from liveness (gateway: `/health/readiness`). */
  readinessPath?: string;
  /** Memory limit (MiB); the request is half of it. */
  memoryMb: number;
  /** CPU request (millicores); the limit is four times it. */
  cpuMillis: number;
  /** Data volumes: key → mount path. Any makes the workload a StatefulSet with one PVC per key. */
  volumes?: Record<string, string>;
  /** PVC size per data volume (GiB). */
  volumeGi?: number;
  /** Writable scratch mounts (emptyDir) for images that run with a read-only root filesystem. */
  scratch?: Record<string, string>;
  /** UID the image runs as (runAsNonRoot needs a numeric user); 65532 unless said. */
  uid?: number;
  /** Whether the image runs with a read-only root filesystem (writes only to `volumes` and `scratch`). */
  readOnlyRoot?: boolean;
  replicas?: number;
  /** Name of the `kubernetes.io/dockerconfigjson` Secret the pod pulls its image with (private registry). */
  imagePullSecret?: string;
  /** Seconds Kubernetes waits after SIGTERM before SIGKILL. */
  terminationGraceSeconds?: number;
}

/** A Kubernetes API object as plain JSON. */
export type KubeObject = { apiVersion: string; kind: string; metadata: Record<string, unknown> } & Record<
  string,
  unknown
>;

/** Labels every object of `service` carries; also the selector of its pods. */
export function labelsFor(service: string): Record<string, string> {
  return { "app.kubernetes.io/name": service, "app.kubernetes.io/part-of": "platform" };
}

function container(spec: WorkloadSpec): Record<string, unknown> {
  const fileMounts = (volume: string, files: Record<string, string> | undefined) =>
    Object.entries(files ?? {}).map(([mountPath, key]) => ({
      name: volume,
      mountPath,
      subPath: key,
      readOnly: true,
    }));
  const env: Record<string, unknown>[] = Object.keys(spec.env ?? {})
    .sort()
    .map((name) => ({ name, value: spec.env?.[name] }));
  for (const name of [...(spec.secretEnv ?? [])].sort())
    env.push({ name, valueFrom: { secretKeyRef: { name: `${spec.name}-env`, key: name } } });
  const mounts = [
    ...Object.entries(spec.volumes ?? {}).map(([key, mountPath]) => ({ name: key, mountPath })),
    ...Object.entries(spec.scratch ?? {}).map(([key, mountPath]) => ({ name: key, mountPath })),
    ...fileMounts("files", spec.files),
    ...fileMounts("secret-files", spec.secretFiles),
  ];
  const liveness: Probe = probeFor(spec.healthcheck);
  return {
    name: spec.name,
    image: spec.image,
    ...(spec.command ? { command: spec.command } : {}),
    ...(spec.args ? { args: spec.args } : {}),
    env,
    ...(spec.port
      ? { ports: servicePorts(spec).map(({ name, port }) => ({ name, containerPort: port })) }
      : {}),
    ...(mounts.length > 0 ? { volumeMounts: mounts } : {}),
    startupProbe: startupProbeFor(spec.healthcheck, spec.readinessPath),
    livenessProbe: liveness,
    readinessProbe: probeFor(spec.healthcheck, spec.readinessPath),
    resources: {
      requests: { cpu: `${spec.cpuMillis}m`, memory: `${Math.ceil(spec.memoryMb / 2)}Mi` },
      limits: { cpu: `${spec.cpuMillis * 4}m`, memory: `${spec.memoryMb}Mi` },
    },
    securityContext: {
      runAsNonRoot: true,
      runAsUser: spec.uid ?? 65532,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: spec.readOnlyRoot ?? false,
      capabilities: { drop: ["ALL"] },
    },
  };
}

function servicePorts(spec: WorkloadSpec): { name: string; port: number }[] {
  if (!spec.port) return [];
  return [
    { name: "http", port: spec.port },
    ...(spec.extraPorts ?? []).map((port) => ({ name: `port-${port}`, port })),
  ];
}

/** The pod template of `spec` (also the pod of a Job). */
export function podTemplate(
  spec: WorkloadSpec,
  restartPolicy?: "Never" | "OnFailure",
): Record<string, unknown> {
  const volumes = [
    ...Object.keys(spec.scratch ?? {}).map((name) => ({ name, emptyDir: {} })),
    ...(spec.files ? [{ name: "files", configMap: { name: `${spec.name}-files` } }] : []),
    ...(spec.secretFiles ? [{ name: "secret-files", secret: { secretName: `${spec.name}-files` } }] : []),
  ];
  return {
    metadata: { labels: labelsFor(spec.name) },
    spec: {
      ...(spec.serviceAccount
        ? { serviceAccountName: spec.serviceAccount, automountServiceAccountToken: true }
        : { automountServiceAccountToken: false }),
      ...(restartPolicy ? { restartPolicy } : {}),
      ...(spec.imagePullSecret ? { imagePullSecrets: [{ name: spec.imagePullSecret }] } : {}),
      securityContext: {
        runAsNonRoot: true,
        fsGroup: spec.uid ?? 65532,
        seccompProfile: { type: "RuntimeDefault" },
      },
      ...(spec.terminationGraceSeconds
        ? { terminationGracePeriodSeconds: spec.terminationGraceSeconds }
        : {}),
      containers: [container(spec)],
      ...(volumes.length > 0 ? { volumes } : {}),
    },
  };
}

/**
 * A Job running `spec`'s container to completion once (no probes: a run-once container has no health check).
 * `name` omitted: Pulumi names it, so a changed Job (new image) is created anew instead of patched.
 */
export function renderJob(spec: WorkloadSpec, namespace: string): KubeObject {
  const pod = podTemplate(spec, "OnFailure") as { spec: { containers: Record<string, unknown>[] } };
  for (const c of pod.spec.containers) {
    delete c.startupProbe;
    delete c.livenessProbe;
    delete c.readinessProbe;
  }
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { namespace, labels: labelsFor(spec.name) },
    spec: { backoffLimit: 6, ttlSecondsAfterFinished: 86400, template: pod },
  };
}

/**
 * The workload and Service of `spec` in `namespace`.
 * @returns `[workload, service]`; `service` is undefined when the spec has no port.
 */
export function renderWorkload(spec: WorkloadSpec, namespace: string): [KubeObject, KubeObject | undefined] {
  const labels = labelsFor(spec.name);
  const metadata = { name: spec.name, namespace, labels };
  const stateful = Object.keys(spec.volumes ?? {}).length > 0;
  const pod = podTemplate(spec);
  const workload: KubeObject = stateful
    ? {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata,
        spec: {
          serviceName: spec.name,
          replicas: 1,
          selector: { matchLabels: labels },
          template: pod,
          volumeClaimTemplates: Object.keys(spec.volumes ?? {}).map((name) => ({
            metadata: { name },
            spec: {
              accessModes: ["ReadWriteOnce"],
              resources: { requests: { storage: `${spec.volumeGi ?? 10}Gi` } },
            },
          })),
          // Data outlives `pulumi destroy` and scale-down (docs/kubernetes.md, "Teardown").
          persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
        },
      }
    : {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata,
        spec: {
          replicas: spec.replicas ?? 1,
          selector: { matchLabels: labels },
          strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
          template: pod,
        },
      };
  const service: KubeObject | undefined = spec.port
    ? {
        apiVersion: "v1",
        kind: "Service",
        metadata,
        spec: {
          selector: labels,
          ports: servicePorts(spec).map(({ name, port }) => ({ name, port, targetPort: port })),
        },
      }
    : undefined;
  return [workload, service];
}
