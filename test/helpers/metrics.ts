/** Reading prom-client metrics in tests, straight from a Registry (no scrape, no text parsing). */
import type { Registry } from "prom-client";

/**
 * The sum of the values of metric `name` in `registry` over its samples whose labels include `labels` (all
 * samples when `labels` is empty); 0 when the metric is not registered or no sample matches. Meant for counters
 * and gauges (a histogram's samples mix buckets, sum and count).
 */
export async function metricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const values = (await registry.getSingleMetric(name)?.get())?.values ?? [];
  return values
    .filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))
    .reduce((sum, v) => sum + Number(v.value), 0);
}
