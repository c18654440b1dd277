/**
 * The kubernetes stack (Pulumi.k8s.yaml, `.env.example`) under Pulumi mocks: every service of the Docker
 * stacks is declared, every object validates against the Kubernetes API schemas (kubernetes-models, offline),
 * and the policies hold (requests/limits, probes, non-root, gateway HPA/PDB, data services reachable only from
 * their clients, no secret in a ConfigMap or an env literal).
 */
import { readFileSync } from "node:fs";
import { parse as parseDotenv } from "dotenv";
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { Job } from "kubernetes-models/batch/v1";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { Role, RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from "kubernetes-models/v1";
import { beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { dependenciesOf, installMocks, isSecretValue, type Registered, stackSettings } from "./harness.js";

// biome-ignore lint/suspicious/noExplicitAny: test-side reading of plain API objects.
type Loose = Record<string, any>;

const SERVICES = [
  "chat",
  "console",
  "gateway",
  "trace-web",
  "trace-worker",
  "metrics",
  "dashboards",
  "alertmanager",
  "relational-db",
  "document-db",
  "cache",
  "analytics-db",
  "object-store",
  "object-store-init",
  "pii-analyzer",
  "pii-anonymizer",
  "scanner",
  "relational-db-exporter",
  "cache-exporter",
];
// biome-ignore lint/suspicious/noExplicitAny: each model takes its own typed shape; validate() checks it.
const KINDS: Record<string, new (x: any) => { validate(): void }> = {
  Deployment,
  StatefulSet,
  Job,
  Service,
  Secret,
  ConfigMap,
  Namespace,
  ServiceAccount,
  Role,
  RoleBinding,
  HorizontalPodAutoscaler,
  PodDisruptionBudget,
  NetworkPolicy,
  Ingress,
};

let objects: Loose[];
let secretValues: string[];
let regs: Registered[];

// A private registry: the stack pulls every image with this Secret, which it creates from the login.
const PULL_SECRET = "registry-pull";
const REGISTRY_LOGIN = { registryUsername: "ci-bot", REGISTRY_TOKEN: "ghp_registry-token-for-the-test" };

beforeAll(async () => {
  await installMocks("k8s");
  const { parseConfig } = await import("../../infra/config.js");
  const { REPO_ROOT } = await import("../../infra/files.js");
  const { buildKubernetesPlatform } = await import("../../infra/kubernetes/stack.js");
  const env = parseDotenv(readFileSync(`${REPO_ROOT}.env.example`, "utf8"));
  const { registrations } = await import("./harness.js");
  const settings = {
    ...(await stackSettings("k8s")),
    imagePullSecret: PULL_SECRET,
    registryUsername: REGISTRY_LOGIN.registryUsername,
  };
  const platform = buildKubernetesPlatform(
    parseConfig(settings, { ...env, REGISTRY_TOKEN: REGISTRY_LOGIN.REGISTRY_TOKEN }),
  );
  await new Promise((done) => platform.outputs.traceLogin.apply(done));
  await new Promise((r) => setTimeout(r, 1000));
  regs = registrations().filter((r: Registered) => r.type.startsWith("kubernetes:") && r.custom);
  objects = regs
    .filter((r) => !r.type.startsWith("pulumi:providers"))
    .map((r) => ({ kind: r.type.split(":").pop(), apiVersion: r.type.split(":")[1], ...r.inputs }));
  secretValues = registrations()
    .filter((r) => r.type.startsWith("random:"))
    .map((r) => `rnd-${r.name}`)
    .concat(REGISTRY_LOGIN.REGISTRY_TOKEN);
}, 60_000);

const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);
const workloads = () => [...ofKind("Deployment"), ...ofKind("StatefulSet"), ...ofKind("Job")];
const nameOf = (o: Loose) => o.metadata?.name ?? o.metadata?.labels?.["app.kubernetes.io/name"];

describe("kubernetes stack", () => {
  it("declares a workload for every service of the Docker stacks, and a Job for the migrations", () => {
    const names = workloads().map(nameOf).sort();
    expect(names).toEqual([...SERVICES, "gateway-migrate"].sort());
  });

  it("validates every object against the Kubernetes schemas", () => {
    expect(objects.length).toBeGreaterThan(40);
    for (const o of objects) {
      const Model = KINDS[o.kind];
      if (!Model) throw new Error(`no model for ${o.kind}`);
      const { apiVersion: _a, ...rest } = o;
      new Model(rest).validate();
    }
  });

  it("gives every container requests, limits, non-root and (long-running) probes", () => {
    for (const w of workloads()) {
      const pod = w.spec.template.spec;
      expect(pod.securityContext.runAsNonRoot, nameOf(w)).toBe(true);
      for (const c of pod.containers) {
        expect(c.resources.requests.cpu, nameOf(w)).toBeDefined();
        expect(c.resources.limits.memory, nameOf(w)).toBeDefined();
        expect(c.securityContext.runAsNonRoot).toBe(true);
        if (w.kind !== "Job") expect(c.livenessProbe && c.readinessProbe, nameOf(w)).toBeTruthy();
      }
    }
  });

  it("scales the gateway: HPA, PDB, no unavailable replica on rollout, grace above the drain, spool volume", () => {
    const hpa = ofKind("HorizontalPodAutoscaler")[0] as Loose;
    expect(hpa.spec).toMatchObject({ minReplicas: 2, maxReplicas: 6, scaleTargetRef: { name: "gateway" } });
    expect((ofKind("PodDisruptionBudget")[0] as Loose).spec.maxUnavailable).toBe(1);
    const gw = ofKind("Deployment").find((d) => nameOf(d) === "gateway") as Loose;
    expect(gw.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
    const pod = gw.spec.template.spec;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(8);
    const c = pod.containers[0];
    expect(c.readinessProbe.httpGet.path).toBe("/health/readiness");
    expect(c.livenessProbe.httpGet.path).toBe("/health/liveliness");
    const spool = c.env.find((e: Loose) => e.name === "GATEWAY_SPOOL_DIR").value;
    expect(c.volumeMounts.some((m: Loose) => m.mountPath === spool)).toBe(true);
  });

  it("migrates once per rollout: a Job of the gateway image the Deployment waits for; replicas do not migrate", async () => {
    const { MIGRATE_SCRIPT } = await import("../../infra/kubernetes/migrate-job.js");
    const job = ofKind("Job").find((j) => nameOf(j) === "gateway-migrate") as Loose;
    const gw = ofKind("Deployment").find((d) => nameOf(d) === "gateway") as Loose;
    const [jobC, gwC] = [job.spec.template.spec.containers[0], gw.spec.template.spec.containers[0]];
    expect(jobC.image).toBe(gwC.image);
    expect(jobC.command).toEqual(["node", "--input-type=module", "-e", MIGRATE_SCRIPT]);
    expect(jobC.env).toEqual([
      { name: "DATABASE_URL", valueFrom: { secretKeyRef: { name: "gateway-env", key: "DATABASE_URL" } } },
    ]);
    expect(gwC.env).toContainEqual({ name: "GATEWAY_RUN_MIGRATIONS", value: "false" });
    // Declared: the Deployment (its new image) only after the Job of that image completed.
    const jobUrn = dependenciesOf("kubernetes:apps/v1:Deployment", "deployment-gateway").find((urn) =>
      urn.includes("kubernetes:batch/v1:Job::job-gateway-migrate"),
    );
    expect(jobUrn).toBeDefined();
  });

  it("admits each data service only from its clients", () => {
    const policy = (svc: string) =>
      ofKind("NetworkPolicy").find((p) => p.metadata.name === `allow-to-${svc}`) as Loose;
    const clients = (svc: string) =>
      policy(svc).spec.ingress[0].from.map(
        (f: Loose) => f.podSelector?.matchLabels["app.kubernetes.io/name"],
      );
    expect(clients("relational-db").sort()).toEqual(
      ["gateway", "gateway-migrate", "relational-db-exporter", "trace-web", "trace-worker"].sort(),
    );
    expect(clients("document-db").sort()).toEqual(["chat", "console"]);
    expect(ofKind("NetworkPolicy").some((p) => p.metadata.name === "default-deny")).toBe(true);
  });

  it("keeps every secret out of ConfigMaps and env literals", () => {
    expect(secretValues.length).toBeGreaterThan(10);
    for (const o of [...ofKind("ConfigMap"), ...workloads()]) {
      const text = JSON.stringify(
        o.kind === "ConfigMap" ? o.data : o.spec.template.spec.containers.map((c: Loose) => c.env),
      );
      for (const s of secretValues) expect(text.includes(s), `${o.kind} ${nameOf(o)}`).toBe(false);
    }
  });

  it("runs each image as the user its Dockerfile names (docs/deploy-contracts.md, Users on Kubernetes)", () => {
    const expected: Record<string, number> = {
      gateway: 1000,
      console: 1000,
      scanner: 1000,
      chat: 1000,
      "trace-web": 1001,
      "trace-worker": 1001,
      "pii-analyzer": 1001,
      "pii-anonymizer": 1001,
      "relational-db": 999,
      "document-db": 999,
      cache: 999,
      "analytics-db": 101,
      "object-store": 65532,
      "object-store-init": 65532,
      metrics: 65534,
      alertmanager: 65534,
      "relational-db-exporter": 65534,
      "cache-exporter": 59000,
      dashboards: 472,
      "gateway-migrate": 1000,
    };
    const actual = Object.fromEntries(
      workloads().map((w) => [nameOf(w), w.spec.template.spec.containers[0].securityContext.runAsUser]),
    );
    expect(actual).toEqual(expected);
  });

  it("pulls every pod's image with platform:imagePullSecret, a dockerconfigjson Secret made from the login", () => {
    for (const w of workloads())
      expect(w.spec.template.spec.imagePullSecrets, nameOf(w)).toEqual([{ name: PULL_SECRET }]);
    const secret = ofKind("Secret").find((s) => s.metadata.name === PULL_SECRET) as Loose;
    expect(secret.type).toBe("kubernetes.io/dockerconfigjson");
    const config = JSON.parse(secret.stringData[".dockerconfigjson"]);
    const login = `${REGISTRY_LOGIN.registryUsername}:${REGISTRY_LOGIN.REGISTRY_TOKEN}`;
    expect(config.auths["ghcr.io"]).toEqual({
      username: REGISTRY_LOGIN.registryUsername,
      password: REGISTRY_LOGIN.REGISTRY_TOKEN,
      auth: Buffer.from(login).toString("base64"),
    });
    const reg = regs.find((r) => r.name === `secret-${PULL_SECRET}`);
    expect(isSecretValue(reg?.rawInputs.stringData)).toBe(true);
  });

  it("scrapes every gateway replica through pod discovery", () => {
    const files = ofKind("Secret").find((s) => s.metadata.name === "metrics-files") as Loose;
    const yml = Object.values(files.stringData as Record<string, string>).join("\n");
    expect(yml).toMatch(/kubernetes_sd_configs:\s*\n\s*- role: pod/);
    // Each replica is scraped at its pod address (not loopback): the gateway's METRICS_TOKEN goes with it.
    const env = ofKind("Secret").find((s) => s.metadata.name === "gateway-env") as Loose;
    const token = (env.stringData as Record<string, string>).METRICS_TOKEN;
    expect(token).toBeTruthy();
    const prometheus = parseYaml(yml) as { scrape_configs: Array<Record<string, unknown>> };
    const job = prometheus.scrape_configs.find((j) => j.job_name === "gateway");
    expect(job?.authorization).toEqual({ type: "Bearer", credentials: token });
  });
});
