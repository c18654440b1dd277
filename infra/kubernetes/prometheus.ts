/**
 * The monitoring configuration of the kubernetes target: monitoring/prometheus.yml with the gateway's scrape job
 * switched from one static target to Prometheus's pod discovery, so that every gateway replica is scraped (a
 * Service would hand each scrape to one replica at random). Source: Prometheus configuration reference,
 * `kubernetes_sd_configs` (role `pod`) and `relabel_configs`.
 */
import { parseDocument } from "yaml";

/**
 * @returns prometheus.yml where the scrape job `job` discovers the pods labelled `app.kubernetes.io/name: job`
 *   in `namespace` and scrapes their container port `port` (each replica its own target, labelled `pod`).
 * @throws Error when the file has no scrape job of that name.
 */
export function withPodDiscovery(
  prometheusYml: string,
  job: string,
  namespace: string,
  port: number,
): string {
  const doc = parseDocument(prometheusYml);
  const jobs = doc.get("scrape_configs") as {
    items: Array<{ get(k: string): unknown; set(k: string, v: unknown): void; delete(k: string): void }>;
  };
  const target = jobs?.items.find((item) => item.get("job_name") === job);
  if (target === undefined) throw new Error(`prometheus.yml has no scrape job "${job}"`);
  target.delete("static_configs");
  target.set("kubernetes_sd_configs", doc.createNode([{ role: "pod", namespaces: { names: [namespace] } }]));
  target.set(
    "relabel_configs",
    doc.createNode([
      {
        source_labels: ["__meta_kubernetes_pod_label_app_kubernetes_io_name"],
        regex: job,
        action: "keep",
      },
      { source_labels: ["__meta_kubernetes_pod_container_port_number"], regex: String(port), action: "keep" },
      { source_labels: ["__meta_kubernetes_pod_name"], target_label: "pod" },
    ]),
  );
  return doc.toString();
}
