/**
 * The cluster-level objects around the workloads: the gateway's HorizontalPodAutoscaler and
 * PodDisruptionBudget, NetworkPolicies (deny by default, then only {@link FLOWS}) and the TLS Ingress of the
 * public hosts. Plain API objects; sources: Kubernetes API reference (autoscaling/v2, policy/v1,
 * networking.k8s.io/v1).
 */
import { PUBLIC_HOSTS } from "../config.js";
import { type KubeObject, labelsFor } from "./workload.js";

/**
 * Who may open connections to whom inside the namespace: service → its clients and the ports they use. A
 * service absent here accepts no in-cluster traffic; the public apps also accept the ingress controller.
 */
export const FLOWS: Record<string, { from: readonly string[]; ports: readonly number[] }> = {
  "relational-db": {
    from: ["gateway", "gateway-migrate", "trace-web", "trace-worker", "relational-db-exporter"],
    ports: [5432],
  },
  "document-db": { from: ["chat", "console"], ports: [27017] },
  cache: { from: ["gateway", "trace-web", "trace-worker", "cache-exporter"], ports: [6379] },
  "analytics-db": { from: ["trace-web", "trace-worker"], ports: [8123, 9000] },
  "object-store": { from: ["trace-web", "trace-worker", "object-store-init"], ports: [9000] },
  gateway: { from: ["chat", "console", "metrics"], ports: [4000] },
  scanner: { from: ["gateway", "metrics"], ports: [8000] },
  console: { from: ["metrics"], ports: [3001] },
  "pii-analyzer": { from: ["gateway"], ports: [3000] },
  "pii-anonymizer": { from: ["gateway"], ports: [3000] },
  "trace-web": { from: ["gateway", "trace-worker"], ports: [3000] },
  "relational-db-exporter": { from: ["metrics"], ports: [9187] },
  "cache-exporter": { from: ["metrics"], ports: [9121] },
  alertmanager: { from: ["metrics"], ports: [9093] },
  metrics: { from: ["dashboards"], ports: [9090] },
};

/**
 * One policy allowing the pods of `services` to open connections outside the cluster's private ranges (LLM
 * providers, the model hub, webhooks, managed databases) and to the Kubernetes API (Prometheus's pod
 * discovery goes through the metrics pods, which are listed by the caller when they need it).
 */
export function externalEgress(namespace: string, services: readonly string[]): KubeObject {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: {
      name: "allow-external-egress",
      namespace,
      labels: { "app.kubernetes.io/part-of": "platform" },
    },
    spec: {
      podSelector: {
        matchExpressions: [{ key: "app.kubernetes.io/name", operator: "In", values: [...services] }],
      },
      policyTypes: ["Egress"],
      egress: [{ to: [{ ipBlock: { cidr: "0.0.0.0/0" } }] }],
    },
  };
}

/** Gateway scaling settings (stack config). */
export interface GatewayScaling {
  minReplicas: number;
  maxReplicas: number;
  /** Average CPU utilisation (% of the request) the autoscaler aims at. */
  cpuTargetPercent: number;
}

/**
 * The gateway's HorizontalPodAutoscaler and PodDisruptionBudget (at most one replica down by a voluntary
 * disruption, so a node drain never takes the gateway away).
 * @throws Error when min exceeds max.
 */
export function gatewayScaling(scaling: GatewayScaling, namespace: string): [KubeObject, KubeObject] {
  if (scaling.minReplicas > scaling.maxReplicas)
    throw new Error(`gateway minReplicas ${scaling.minReplicas} exceeds maxReplicas ${scaling.maxReplicas}`);
  const metadata = { name: "gateway", namespace, labels: labelsFor("gateway") };
  const hpa: KubeObject = {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata,
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "gateway" },
      minReplicas: scaling.minReplicas,
      maxReplicas: scaling.maxReplicas,
      metrics: [
        {
          type: "Resource",
          resource: {
            name: "cpu",
            target: { type: "Utilization", averageUtilization: scaling.cpuTargetPercent },
          },
        },
      ],
    },
  };
  const pdb: KubeObject = {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata,
    spec: { maxUnavailable: 1, selector: { matchLabels: labelsFor("gateway") } },
  };
  return [hpa, pdb];
}

/**
 * A default-deny policy for every pod of the namespace (ingress and egress), an egress allowance for DNS and
 * for reaching other pods of the namespace (ingress is what each service's own policy restricts), and one
 * policy per {@link FLOWS} entry. `ingressNamespace` is where the ingress controller runs.
 */
export function networkPolicies(namespace: string, ingressNamespace: string): KubeObject[] {
  const meta = (name: string) => ({ name, namespace, labels: { "app.kubernetes.io/part-of": "platform" } });
  const policies: KubeObject[] = [
    {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: meta("default-deny"),
      spec: { podSelector: {}, policyTypes: ["Ingress", "Egress"] },
    },
    {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: meta("egress-dns-and-namespace"),
      spec: {
        podSelector: {},
        policyTypes: ["Egress"],
        egress: [
          {
            ports: [
              { protocol: "UDP", port: 53 },
              { protocol: "TCP", port: 53 },
            ],
          },
          { to: [{ podSelector: {} }] },
        ],
      },
    },
  ];
  const publicApps = new Set<string>(Object.keys(PUBLIC_HOSTS));
  const clients = Object.entries(FLOWS);
  for (const name of publicApps) if (!FLOWS[name]) clients.push([name, { from: [], ports: [] }]);
  for (const [service, flow] of clients) {
    const from: Record<string, unknown>[] = flow.from.map((client) => ({
      podSelector: { matchLabels: { "app.kubernetes.io/name": client } },
    }));
    if (publicApps.has(service))
      from.push({ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ingressNamespace } } });
    policies.push({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: meta(`allow-to-${service}`),
      spec: {
        podSelector: { matchLabels: { "app.kubernetes.io/name": service } },
        policyTypes: ["Ingress"],
        ingress: [
          { from, ...(flow.ports.length > 0 ? { ports: flow.ports.map((port) => ({ port })) } : {}) },
        ],
      },
    });
  }
  return policies;
}

/**
 * The Ingress of the public hosts (`chat.`, `console.`, `gateway.`, `trace.`, `dashboards.<domain>`) with TLS
 * from the Secret `tlsSecret` (cert-manager fills it when `clusterIssuer` is given).
 */
export function publicIngress(args: {
  namespace: string;
  domain: string;
  ports: Record<keyof typeof PUBLIC_HOSTS, number>;
  tlsSecret: string;
  className?: string;
  clusterIssuer?: string;
}): KubeObject {
  const entries = Object.entries(PUBLIC_HOSTS) as [keyof typeof PUBLIC_HOSTS, string][];
  const hosts = entries.map(([, sub]) => `${sub}.${args.domain}`);
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      name: "platform",
      namespace: args.namespace,
      labels: { "app.kubernetes.io/part-of": "platform" },
      ...(args.clusterIssuer
        ? { annotations: { "cert-manager.io/cluster-issuer": args.clusterIssuer } }
        : {}),
    },
    spec: {
      ...(args.className ? { ingressClassName: args.className } : {}),
      tls: [{ hosts, secretName: args.tlsSecret }],
      rules: entries.map(([service, sub]) => ({
        host: `${sub}.${args.domain}`,
        http: {
          paths: [
            {
              path: "/",
              pathType: "Prefix",
              backend: { service: { name: service, port: { number: args.ports[service] } } },
            },
          ],
        },
      })),
    },
  };
}
