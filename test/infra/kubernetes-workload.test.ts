/**
 * The Kubernetes renderer of a service (infra/kubernetes/): probes derived from the Docker health checks, and
 * the rendered objects valid against the Kubernetes API schemas (kubernetes-models, offline), with requests,
 * limits, non-root and no secret literal in env.
 */
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { Service } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { httpCheck } from "../../infra/container.js";
import { durationSeconds, probedUrl, probeFor } from "../../infra/kubernetes/probes.js";
import { type KubeObject, renderWorkload, type WorkloadSpec } from "../../infra/kubernetes/workload.js";

/** Rendered objects read back loosely (their shape is checked by validate()). */
// biome-ignore lint/suspicious/noExplicitAny: test-side reading of plain API objects.
type Loose = Record<string, any>;

const gatewayCheck = httpCheck("node", "http://127.0.0.1:4000/health/liveliness", {
  startPeriod: "180s",
  interval: "15s",
});

function validate(obj: KubeObject): void {
  const Model = { Deployment, StatefulSet, Service }[obj.kind as "Deployment"];
  if (!Model) throw new Error(`no model for ${obj.kind}`);
  // biome-ignore lint/suspicious/noExplicitAny: the models take their own typed shape; validate() checks it.
  new Model(obj as any).validate();
}

describe("probes from Docker health checks", () => {
  it("turns each httpCheck form into an httpGet probe on the same port and path", () => {
    for (const probe of ["wget", "curl", "node"] as const) {
      const p = probeFor(httpCheck(probe, "http://127.0.0.1:9090/-/healthy"));
      expect(p.httpGet).toEqual({ path: "/-/healthy", port: 9090 });
      expect(p.exec).toBeUndefined();
    }
  });

  it("gives the gateway readiness on /health/readiness and keeps Docker's timing", () => {
    const p = probeFor(gatewayCheck, "/health/readiness");
    expect(p).toMatchObject({ httpGet: { path: "/health/readiness", port: 4000 }, periodSeconds: 15 });
  });

  it("runs a shell check as exec sh -c and a CMD check as its argv", () => {
    expect(probeFor({ test: ["CMD-SHELL", "pg_isready -U x"] }).exec?.command).toEqual([
      "sh",
      "-c",
      "pg_isready -U x",
    ]);
    expect(probeFor({ test: ["CMD", "redis-cli", "ping"] }).exec?.command).toEqual(["redis-cli", "ping"]);
  });

  it("does not take a remote URL for a local probe", () => {
    expect(probedUrl(httpCheck("curl", "http://example.com/health"))).toBeUndefined();
  });

  it("reads Docker durations and refuses others", () => {
    expect(durationSeconds("1m30s")).toBe(90);
    expect(durationSeconds("180s")).toBe(180);
    expect(() => durationSeconds("1h")).toThrow(/not a duration/);
  });
});

const gateway: WorkloadSpec = {
  name: "gateway",
  image: "registry.example.com/platform/gateway:1",
  port: 4000,
  env: { PORT: "4000" },
  secretEnv: ["GATEWAY_MASTER_KEY", "DATABASE_URL"],
  healthcheck: gatewayCheck,
  readinessPath: "/health/readiness",
  memoryMb: 1024,
  cpuMillis: 250,
  scratch: { spool: "/app/spool", tmp: "/tmp" },
  readOnlyRoot: true,
  replicas: 2,
  terminationGraceSeconds: 45,
};
const cache: WorkloadSpec = {
  name: "cache",
  image: "registry.example.com/redis:7",
  port: 6379,
  healthcheck: { test: ["CMD", "redis-cli", "ping"] },
  memoryMb: 512,
  cpuMillis: 100,
  volumes: { data: "/data" },
  uid: 999,
};

describe("renderWorkload", () => {
  it("renders objects valid against the Kubernetes API schemas", () => {
    for (const spec of [gateway, cache])
      for (const obj of renderWorkload(spec, "platform")) if (obj) validate(obj);
  });

  it("fails validation on a broken object (the check can fail)", () => {
    const [deployment] = renderWorkload(gateway, "platform");
    const broken = { ...deployment, spec: { ...(deployment.spec as object), replicas: "two" } };
    expect(() => validate(broken)).toThrow();
  });

  it("rolls the gateway with maxUnavailable 0, non-root, limits, and secrets by reference only", () => {
    const [deployment, service] = renderWorkload(gateway, "platform");
    expect(deployment.kind).toBe("Deployment");
    const spec = deployment.spec as Loose;
    expect(spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
    expect(spec.replicas).toBe(2);
    expect(spec.template.spec.terminationGracePeriodSeconds).toBe(45);
    const c = spec.template.spec.containers[0];
    expect(c.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true });
    expect(c.resources.limits).toEqual({ cpu: "1000m", memory: "1024Mi" });
    expect(c.resources.requests).toEqual({ cpu: "250m", memory: "512Mi" });
    expect(c.livenessProbe.httpGet.path).toBe("/health/liveliness");
    expect(c.readinessProbe.httpGet.path).toBe("/health/readiness");
    const master = c.env.find((e: { name: string }) => e.name === "GATEWAY_MASTER_KEY");
    expect(master).toEqual({
      name: "GATEWAY_MASTER_KEY",
      valueFrom: { secretKeyRef: { name: "gateway-env", key: "GATEWAY_MASTER_KEY" } },
    });
    expect(service?.kind).toBe("Service");
  });

  it("names an image pull secret on the pod only when one is given", () => {
    const pod = (spec: WorkloadSpec) => (renderWorkload(spec, "platform")[0].spec as Loose).template.spec;
    expect(pod(gateway).imagePullSecrets).toBeUndefined();
    expect(pod({ ...cache, imagePullSecret: "registry-pull" }).imagePullSecrets).toEqual([
      { name: "registry-pull" },
    ]);
  });

  it("makes a service with data volumes a StatefulSet whose claims outlive deletion", () => {
    const [set] = renderWorkload(cache, "platform");
    expect(set.kind).toBe("StatefulSet");
    const spec = set.spec as Loose;
    expect(spec.volumeClaimTemplates.map((v: { metadata: { name: string } }) => v.metadata.name)).toEqual([
      "data",
    ]);
    expect(spec.persistentVolumeClaimRetentionPolicy.whenDeleted).toBe("Retain");
    expect(spec.template.spec.containers[0].securityContext.runAsUser).toBe(999);
  });
});
