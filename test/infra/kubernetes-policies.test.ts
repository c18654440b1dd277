/**
 * The cluster-level objects of the kubernetes renderer (infra/kubernetes/policies.ts): valid against the
 * Kubernetes API schemas (kubernetes-models, offline); the gateway's HPA and PDB; deny-by-default network
 * policies with each data service reachable only from its clients; the TLS Ingress of the public hosts.
 */
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { describe, expect, it } from "vitest";
import { FLOWS, gatewayScaling, networkPolicies, publicIngress } from "../../infra/kubernetes/policies.js";
import type { KubeObject } from "../../infra/kubernetes/workload.js";

// biome-ignore lint/suspicious/noExplicitAny: test-side reading of plain API objects.
type Loose = Record<string, any>;

const MODELS = { HorizontalPodAutoscaler, PodDisruptionBudget, NetworkPolicy, Ingress } as const;
function validate(obj: KubeObject): void {
  const Model = MODELS[obj.kind as keyof typeof MODELS];
  if (!Model) throw new Error(`no model for ${obj.kind}`);
  // biome-ignore lint/suspicious/noExplicitAny: the models take their own typed shape; validate() checks it.
  new Model(obj as any).validate();
}

const DATA_SERVICES = ["relational-db", "document-db", "cache", "analytics-db", "object-store"];
const policies = networkPolicies("platform", "ingress-nginx");
const allowTo = (service: string) => policies.find((p) => p.metadata.name === `allow-to-${service}`) as Loose;

describe("gateway scaling", () => {
  it("declares an HPA on the gateway Deployment's CPU and a PDB that keeps replicas up", () => {
    const [hpa, pdb] = gatewayScaling({ minReplicas: 2, maxReplicas: 8, cpuTargetPercent: 70 }, "platform");
    validate(hpa);
    validate(pdb);
    expect((hpa as Loose).spec).toMatchObject({
      scaleTargetRef: { kind: "Deployment", name: "gateway" },
      minReplicas: 2,
      maxReplicas: 8,
      metrics: [{ resource: { name: "cpu", target: { averageUtilization: 70 } } }],
    });
    expect((pdb as Loose).spec.maxUnavailable).toBe(1);
  });

  it("refuses min above max", () => {
    expect(() => gatewayScaling({ minReplicas: 4, maxReplicas: 2, cpuTargetPercent: 70 }, "p")).toThrow(
      /exceeds maxReplicas/,
    );
  });
});

describe("network policies", () => {
  it("are all valid and start from deny-all ingress and egress", () => {
    for (const p of policies) validate(p);
    const deny = policies.find((p) => p.metadata.name === "default-deny") as Loose;
    expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ["Ingress", "Egress"] });
  });

  it("let each data service be reached only by its clients, never from outside the namespace", () => {
    for (const service of DATA_SERVICES) {
      const policy = allowTo(service);
      expect(policy, service).toBeDefined();
      const from = policy.spec.ingress.flatMap((rule: Loose) => rule.from) as Loose[];
      expect(from.every((peer) => peer.namespaceSelector === undefined && peer.ipBlock === undefined)).toBe(
        true,
      );
      const clients = from.map((peer) => peer.podSelector.matchLabels["app.kubernetes.io/name"]).sort();
      expect(clients).toEqual([...(FLOWS[service]?.from ?? [])].sort());
    }
  });

  it("keep the apps away from the databases they do not use", () => {
    const clientsOf = (s: string) =>
      allowTo(s).spec.ingress[0].from.map((p: Loose) => p.podSelector.matchLabels);
    expect(clientsOf("relational-db")).not.toContainEqual({ "app.kubernetes.io/name": "chat" });
    expect(clientsOf("document-db")).not.toContainEqual({ "app.kubernetes.io/name": "gateway" });
  });

  it("open the public apps to the ingress controller's namespace", () => {
    for (const app of ["chat", "console", "gateway", "trace-web", "dashboards"]) {
      const from = allowTo(app).spec.ingress[0].from as Loose[];
      expect(from).toContainEqual({
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ingress-nginx" } },
      });
    }
  });
});

describe("ingress", () => {
  it("serves the five public hosts over TLS", () => {
    const ingress = publicIngress({
      namespace: "platform",
      domain: "ai.example.com",
      ports: { chat: 3080, console: 3001, gateway: 4000, "trace-web": 3000, dashboards: 3000 },
      tlsSecret: "platform-tls",
      clusterIssuer: "letsencrypt",
    });
    validate(ingress);
    const hosts = ["chat", "console", "gateway", "trace", "dashboards"].map((s) => `${s}.ai.example.com`);
    const spec = ingress.spec as Loose;
    expect(spec.tls).toEqual([{ hosts, secretName: "platform-tls" }]);
    expect(spec.rules.map((r: Loose) => r.host)).toEqual(hosts);
    expect((ingress.metadata as Loose).annotations["cert-manager.io/cluster-issuer"]).toBe("letsencrypt");
  });
});
