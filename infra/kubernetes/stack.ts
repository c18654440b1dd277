/**
 * The kubernetes target (`platform:target: kubernetes`): the same service descriptions the Docker targets
 * render (infra/*.ts `…Spec`), rendered as Kubernetes objects in one namespace through a `kubernetes.Provider`
 * built from the operator's kubeconfig and context. Our images are built and pushed to the operator's registry.
 */
import * as docker from "@pulumi/docker";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { BUILD_CONTEXT } from "../build.js";
import { chatSpec } from "../chat.js";
import { HOST_PORTS, type PlatformConfig, type ServiceName } from "../config.js";
import { consoleSpec } from "../console.js";
import type { ImageSource, ServiceSpec } from "../container.js";
import { cacheSpec, datastoreUrls, documentDbSpec, relationalDbSpec } from "../datastores.js";
import { gatewaySpec } from "../gateway.js";
import { presidioSpec, SCANNER_PORT, scannerSpec } from "../guardrails.js";
import {
  alertmanagerSpec,
  cacheExporterSpec,
  dashboardsSpec,
  metricsSpec,
  relationalDbExporterSpec,
} from "../monitoring.js";
import { monitoringUploads } from "../monitoring-files.js";
import type { PlatformOutputs } from "../platform.js";
import { Secrets } from "../secrets.js";
import {
  analyticsDbSpec,
  objectStoreInitSpec,
  objectStoreSpec,
  TRACE_BUCKET,
  traceCommonEnv,
  traceWebSpec,
  traceWorkerSpec,
} from "../tracing.js";
import { envSecret, filesConfigMap, terminationGraceSeconds } from "./config-objects.js";
import { MIGRATE_SCRIPT } from "./migrate-job.js";
import { POD_FACTS } from "./pod-facts.js";
import { externalEgress, gatewayScaling, networkPolicies, publicIngress } from "./policies.js";
import { withPodDiscovery } from "./prometheus.js";
import { renderSpec } from "./render-spec.js";
import { type KubeObject, labelsFor, renderJob, renderWorkload } from "./workload.js";

/** The gateway's drain after SIGTERM (its GATEWAY_SHUTDOWN_TIMEOUT_MS default), ms. */
export const GATEWAY_SHUTDOWN_TIMEOUT_MS = 8000;

/** Services that call out of the cluster: LLM providers, the model hub, the alert webhook, chat plugins. */
export const EXTERNAL_CLIENTS: readonly ServiceName[] = ["gateway", "scanner", "alertmanager", "chat"];

/** What {@link buildKubernetesPlatform} declared. */
export interface KubernetesPlatform {
  outputs: PlatformOutputs;
  provider: k8s.Provider;
  /** Every object, as rendered (plain JSON with Outputs inside), before declaration. */
  objects: KubeObject[];
  /** Services with a workload (Deployment, StatefulSet or Job). */
  services: ServiceName[];
}

/**
 * Declares the kubernetes stack described by `config`.
 * @throws Error when a description cannot be rendered (see renderSpec) or the scaling bounds are inconsistent.
 */
export function buildKubernetesPlatform(config: PlatformConfig): KubernetesPlatform {
  const { stack, env } = config;
  const ns = stack.namespace;
  const provider = new k8s.Provider("kubernetes", {
    ...(stack.kubeconfig ? { kubeconfig: stack.kubeconfig } : {}),
    ...(stack.kubeContext ? { context: stack.kubeContext } : {}),
    namespace: ns,
  });
  const opts: pulumi.CustomResourceOptions = { provider };
  const namespace = new k8s.core.v1.Namespace(
    "namespace",
    { metadata: { name: ns, labels: { "app.kubernetes.io/part-of": "platform" } } },
    opts,
  );
  const inNs: pulumi.CustomResourceOptions = { provider, dependsOn: [namespace] };
  const secrets = new Secrets("secrets", { env }).values;
  const base = { config, secrets };

  const registry = stack.imageRegistry ?? "";
  const built = (name: string, dockerfile: string): ImageSource => ({
    built: new docker.Image(`${name}-build`, {
      imageName: `${registry}/${name}:latest`,
      build: {
        context: BUILD_CONTEXT,
        dockerfile: `${BUILD_CONTEXT}${dockerfile}`,
        builderVersion: "BuilderBuildKit",
        platform: stack.platforms[name as ServiceName] ?? "linux/amd64",
      },
      ...(stack.registryUsername && env.REGISTRY_TOKEN
        ? {
            registry: {
              server: registry.split("/")[0],
              username: stack.registryUsername,
              password: pulumi.secret(env.REGISTRY_TOKEN),
            },
          }
        : {}),
    }),
  });
  const imageOf = (source: ImageSource): pulumi.Input<string> =>
    "pull" in source ? source.pull : source.built.repoDigest;

  const own = datastoreUrls(secrets);
  const managedPg = env.MANAGED_POSTGRES_URL;
  const withDb = (url: string, db: string) => {
    const u = new URL(url);
    u.pathname = `/${db}`;
    return pulumi.secret(u.toString());
  };
  const urls = {
    gatewayDatabaseUrl: managedPg ? withDb(managedPg, "gateway") : own.gatewayDatabaseUrl,
    traceDatabaseUrl: managedPg ? withDb(managedPg, "langfuse") : own.traceDatabaseUrl,
    redisUrl: env.MANAGED_REDIS_URL ? pulumi.secret(env.MANAGED_REDIS_URL) : own.redisUrl,
    mongoUri: env.MANAGED_MONGODB_URL ? pulumi.secret(env.MANAGED_MONGODB_URL) : own.mongoUri,
  };

  const files = monitoringUploads(env.ALERT_WEBHOOK_URL);
  files.metrics = files.metrics.map((u) =>
    u.file === "/etc/prometheus/prometheus.yml"
      ? { ...u, content: withPodDiscovery(u.content, "gateway", ns, HOST_PORTS.gateway) }
      : u,
  );
  const relationalExporter = relationalDbExporterSpec(base);
  if (managedPg) relationalExporter.env = { DATA_SOURCE_NAME: withDb(managedPg, "gateway") };
  const cacheExporter = cacheExporterSpec(base);
  if (env.MANAGED_REDIS_URL) cacheExporter.env = { REDIS_ADDR: urls.redisUrl };

  const gateway = gatewaySpec(
    base,
    {
      databaseUrl: urls.gatewayDatabaseUrl,
      redisUrl: urls.redisUrl,
      scannerUrl: `http://scanner:${SCANNER_PORT}`,
      analyzerUrl: "http://pii-analyzer:3000",
      anonymizerUrl: "http://pii-anonymizer:3000",
      traceUrl: "http://trace-web:3000",
    },
    built("gateway", "services/gateway/Dockerfile"),
  );
  const common = traceCommonEnv(base, urls, TRACE_BUCKET);
  const specs: ServiceSpec[] = [
    ...(managedPg ? [] : [relationalDbSpec(base)]),
    ...(env.MANAGED_MONGODB_URL ? [] : [documentDbSpec(base)]),
    ...(env.MANAGED_REDIS_URL ? [] : [cacheSpec(base)]),
    analyticsDbSpec(base),
    objectStoreSpec(base),
    objectStoreInitSpec(base),
    traceWebSpec(base, common),
    traceWorkerSpec(base, common),
    presidioSpec(config, "pii-analyzer", "presidioAnalyzer"),
    presidioSpec(config, "pii-anonymizer", "presidioAnonymizer"),
    scannerSpec(built("scanner", "scanner/Dockerfile")),
    gateway,
    chatSpec(base, urls.mongoUri),
    consoleSpec(
      base,
      {
        mongoUri: urls.mongoUri,
        redisUrl: urls.redisUrl,
        gatewayUrl: `http://gateway:${HOST_PORTS.gateway}`,
      },
      config.stack.consoleImage
        ? { pull: `${config.stack.consoleImage}:${env.CONSOLE_TAG}`, tools: [] }
        : built("console", "services/console/Dockerfile"),
    ),
    metricsSpec(base, files),
    alertmanagerSpec(base, files),
    dashboardsSpec(base, files),
    relationalExporter,
    cacheExporter,
  ];

  const objects: KubeObject[] = [];
  const workloads = new Map<string, KubeObject>();
  let migrations: KubeObject | undefined;
  let bucketJob: KubeObject | undefined;
  for (const spec of specs) {
    const name = spec.name as ServiceName;
    const rendered = renderSpec(spec, POD_FACTS[name], imageOf(spec.image));
    const workload = rendered.workload;
    if (stack.imagePullSecret) workload.imagePullSecret = stack.imagePullSecret;
    if (name === "gateway") {
      workload.readinessPath = "/health/readiness";
      workload.replicas = stack.gatewayMinReplicas;
      workload.terminationGraceSeconds = terminationGraceSeconds(GATEWAY_SHUTDOWN_TIMEOUT_MS);
    }
    if (name === "metrics") workload.serviceAccount = "metrics";
    if (Object.keys(rendered.secretEnv).length > 0)
      objects.push({ ...envSecret(name, ns, {}), stringData: pulumi.secret(rendered.secretEnv) });
    if (Object.keys(rendered.files).length > 0) objects.push(filesConfigMap(name, ns, rendered.files));
    if (workload.secretFiles)
      objects.push({
        ...envSecret(name, ns, {}),
        metadata: { name: `${name}-files`, namespace: ns, labels: labelsFor(name) },
        stringData: rendered.secretFiles,
      });
    if (spec.oneShot) {
      bucketJob = renderJob(workload, ns);
      objects.push(bucketJob);
      continue;
    }
    const [obj, service] = renderWorkload(workload, ns);
    if (stack.storageClassName)
      for (const claim of (obj.spec as { volumeClaimTemplates?: { spec: Record<string, unknown> }[] })
        .volumeClaimTemplates ?? [])
        claim.spec.storageClassName = stack.storageClassName;
    workloads.set(name, obj);
    objects.push(obj);
    if (service) objects.push(service);
    if (name === "gateway") {
      // Migrations once per rollout: a Job of the new image, which the Deployment waits for.
      migrations = renderJob(
        {
          ...workload,
          name: "gateway-migrate",
          command: ["node", "--input-type=module", "-e", MIGRATE_SCRIPT],
          secretEnv: ["DATABASE_URL"],
          env: {},
          scratch: { tmp: "/tmp" },
        },
        ns,
      );
      // The Job reads the gateway's Secret (DATABASE_URL).
      const pod = (migrations.spec as { template: { spec: { containers: { env: unknown[] }[] } } }).template;
      for (const c of pod.spec.containers)
        c.env = [
          { name: "DATABASE_URL", valueFrom: { secretKeyRef: { name: "gateway-env", key: "DATABASE_URL" } } },
        ];
      objects.push(migrations);
    }
  }

  objects.push(
    ...gatewayScaling(
      {
        minReplicas: stack.gatewayMinReplicas,
        maxReplicas: stack.gatewayMaxReplicas,
        cpuTargetPercent: stack.gatewayCpuTargetPercent,
      },
      ns,
    ),
  );
  objects.push(...prometheusAccess(ns));
  if (stack.imagePullSecret && stack.registryUsername && env.REGISTRY_TOKEN)
    objects.push(
      pullSecret(stack.imagePullSecret, ns, registry.split("/")[0] ?? registry, {
        username: stack.registryUsername,
        token: env.REGISTRY_TOKEN,
      }),
    );
  objects.push(...networkPolicies(ns, stack.ingressNamespace));
  const managedClients = new Set<ServiceName>([...EXTERNAL_CLIENTS]);
  if (managedPg)
    for (const s of ["gateway", "trace-web", "trace-worker", "relational-db-exporter"] as const)
      managedClients.add(s);
  if (env.MANAGED_REDIS_URL)
    for (const s of ["gateway", "trace-web", "trace-worker", "console", "cache-exporter"] as const)
      managedClients.add(s);
  if (env.MANAGED_MONGODB_URL) for (const s of ["chat", "console"] as const) managedClients.add(s);
  objects.push(externalEgress(ns, [...managedClients, "gateway-migrate", "metrics"].sort()));
  objects.push(
    publicIngress({
      namespace: ns,
      domain: stack.domain ?? "",
      ports: {
        chat: HOST_PORTS.chat,
        console: HOST_PORTS.console,
        gateway: HOST_PORTS.gateway,
        "trace-web": 3000,
        dashboards: 3000,
      },
      tlsSecret: stack.tlsSecretName,
      className: stack.ingressClassName,
      ...(stack.clusterIssuer ? { clusterIssuer: stack.clusterIssuer } : {}),
    }),
  );

  // Declaration: Jobs before what needs their result (migrated schema, bucket).
  const declared = new Map<KubeObject, pulumi.CustomResource>();
  const dependsOnJob = (obj: KubeObject): pulumi.Resource[] => {
    const n = obj.metadata.name;
    if (obj.kind === "Deployment" && n === "gateway" && migrations)
      return [declared.get(migrations) as pulumi.Resource];
    if ((n === "trace-web" || n === "trace-worker") && obj.kind === "Deployment" && bucketJob)
      return [declared.get(bucketJob) as pulumi.Resource];
    return [];
  };
  const order = [...objects].sort((a, b) => Number(b.kind === "Job") - Number(a.kind === "Job"));
  for (const obj of order) {
    const extra = dependsOnJob(obj);
    declared.set(obj, declare(obj, { ...inNs, dependsOn: [namespace, ...extra] }));
  }

  const services = [...workloads.keys(), "object-store-init"] as ServiceName[];
  const dataVolumes = [...workloads.entries()].flatMap(([name, obj]) =>
    (
      (obj.spec as { volumeClaimTemplates?: { metadata: { name: string } }[] }).volumeClaimTemplates ?? []
    ).map((claim) => `${claim.metadata.name}-${name}-0`),
  );
  const outputs: PlatformOutputs = {
    urls: config.urls,
    traceLogin: pulumi.secret(
      secrets.traceInitUserPassword.apply((password) => ({ email: stack.traceAdminEmail, password })),
    ),
    dashboardsLogin: pulumi.secret(
      secrets.dashboardAdminPassword.apply((password) => ({ user: env.DASHBOARD_ADMIN_USER, password })),
    ),
    gatewayMasterKey: secrets.gatewayMasterKey,
    dataVolumes: pulumi.output(dataVolumes.sort()),
  };
  return { outputs, provider, objects, services };
}

/**
 * The `kubernetes.io/dockerconfigjson` Secret `name` holding the login to `server` (a registry host, e.g.
 * `ghcr.io`), as `kubectl create secret docker-registry` writes it (Kubernetes docs, "Pull an Image from a
 * Private Registry"); the value is a Pulumi secret.
 */
export function pullSecret(
  name: string,
  namespace: string,
  server: string,
  login: { username: string; token: string },
): KubeObject {
  const auth = Buffer.from(`${login.username}:${login.token}`).toString("base64");
  const config = { auths: { [server]: { username: login.username, password: login.token, auth } } };
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace, labels: { "app.kubernetes.io/part-of": "platform" } },
    type: "kubernetes.io/dockerconfigjson",
    stringData: pulumi.secret({ ".dockerconfigjson": JSON.stringify(config) }),
  };
}

/** Prometheus's ServiceAccount and the Role letting it list and watch the namespace's pods (pod discovery). */
function prometheusAccess(namespace: string): KubeObject[] {
  const metadata = { name: "metrics", namespace, labels: labelsFor("metrics") };
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata,
      rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata,
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "metrics" },
      subjects: [{ kind: "ServiceAccount", name: "metrics", namespace }],
    },
  ];
}

/** The @pulumi/kubernetes resource of one object (resource name `<kind>-<name>`, lowercase). */
function declare(obj: KubeObject, opts: pulumi.CustomResourceOptions): pulumi.CustomResource {
  const { apiVersion: _a, kind, ...args } = obj;
  const labels = obj.metadata.labels as Record<string, string> | undefined;
  const name = `${kind.toLowerCase()}-${String(obj.metadata.name ?? labels?.["app.kubernetes.io/name"])}`;
  // biome-ignore lint/suspicious/noExplicitAny: every class below takes the object's own fields as its args.
  const a = args as any;
  switch (kind) {
    case "Deployment":
      return new k8s.apps.v1.Deployment(name, a, opts);
    case "StatefulSet":
      return new k8s.apps.v1.StatefulSet(name, a, opts);
    case "Service":
      return new k8s.core.v1.Service(name, a, opts);
    case "Secret":
      return new k8s.core.v1.Secret(name, a, opts);
    case "ConfigMap":
      return new k8s.core.v1.ConfigMap(name, a, opts);
    case "ServiceAccount":
      return new k8s.core.v1.ServiceAccount(name, a, opts);
    case "Role":
      return new k8s.rbac.v1.Role(name, a, opts);
    case "RoleBinding":
      return new k8s.rbac.v1.RoleBinding(name, a, opts);
    case "Job":
      return new k8s.batch.v1.Job(name, a, opts);
    case "HorizontalPodAutoscaler":
      return new k8s.autoscaling.v2.HorizontalPodAutoscaler(name, a, opts);
    case "PodDisruptionBudget":
      return new k8s.policy.v1.PodDisruptionBudget(name, a, opts);
    case "NetworkPolicy":
      return new k8s.networking.v1.NetworkPolicy(name, a, opts);
    case "Ingress":
      return new k8s.networking.v1.Ingress(name, a, opts);
    default:
      throw new Error(`no declaration for kind ${kind}`);
  }
}
