/**
 * Adds the bearer token a scrape job sends (Prometheus's `authorization: {type: Bearer, credentials}`) to the
 * text of prometheus.yml, for the job named `job`. The repository's file carries no secret; the Pulumi program
 * uploads the result as a secret.
 */
import { parseDocument } from "yaml";

/**
 * @returns prometheus.yml with `authorization` set on the scrape job `job`.
 * @throws Error when the file has no scrape job of that name.
 */
export function withScrapeToken(prometheusYml: string, job: string, token: string): string {
  const doc = parseDocument(prometheusYml);
  const jobs = doc.get("scrape_configs") as {
    items: Array<{ get(k: string): unknown; set(k: string, v: unknown): void }>;
  };
  const target = jobs?.items.find((item) => item.get("job_name") === job);
  if (target === undefined) throw new Error(`prometheus.yml has no scrape job "${job}"`);
  target.set("authorization", doc.createNode({ type: "Bearer", credentials: token }));
  return doc.toString();
}
