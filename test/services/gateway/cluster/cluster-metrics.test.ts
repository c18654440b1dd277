/**
 * Merging the workers' registries for GET /metrics: counters and histograms add up, each gauge follows the
 * aggregator its definition names, names and labels stay those of one gateway.
 */
import { describe, expect, it } from "vitest";
import { redisMetrics } from "../../../../services/gateway/src/cache/redis.js";
import { merge } from "../../../../services/gateway/src/cluster/cluster-metrics.js";
import { createMetrics } from "../../../../services/gateway/src/metrics/metrics.js";

const caller = { hashed_api_key: "h1", api_key_alias: "a", user: "u" };
const deployment = { litellm_model_name: "m", model_id: "d1", api_provider: "openai" };

/** One worker's registry after `calls` calls, with the given deployment state and limits sharing. */
async function worker(calls: number, state: number, shared: number, remainingBudget: number) {
  const metrics = createMetrics();
  for (let i = 0; i < calls; i++) {
    metrics.requests.inc({ ...caller, requested_model: "general", status_code: "200" });
    metrics.overheadLatency.observe(
      { model_group: "general", api_provider: "openai", litellm_model_name: "m" },
      0.001,
    );
  }
  metrics.deploymentState.set(deployment, state);
  metrics.remainingApiKeyBudget.set({ hashed_api_key: "h1", api_key_alias: "a" }, remainingBudget);
  metrics.apiKeyMaxBudget.set({ hashed_api_key: "h1", api_key_alias: "a" }, 10);
  redisMetrics(metrics.registry).limitsShared.set(shared);
  return metrics.registry.getMetricsAsJSON();
}

/** The value of the sample of `name` (exact series name) whose label text contains `labels`. */
function sample(text: string, name: string, labels = ""): number | undefined {
  const line = text
    .split("\n")
    .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(labels));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("cluster metrics", () => {
  it("sums counters and histograms, and takes each gauge as its definition says", async () => {
    const text = await merge([await worker(3, 1, 1, 4), await worker(5, 2, 0, 2.5)]);
    expect(sample(text, "litellm_proxy_total_requests_metric_total", 'status_code="200"')).toBe(8);
    expect(sample(text, "litellm_overhead_latency_metric_count")).toBe(8);
    expect(sample(text, "litellm_overhead_latency_metric_bucket", 'le="0.001"')).toBe(8);
    expect(sample(text, "litellm_deployment_state")).toBe(2); // the worst state any worker saw
    expect(sample(text, "gateway_limits_shared")).toBe(0); // not shared as soon as one worker keeps its own
    expect(sample(text, "litellm_remaining_api_key_budget_metric")).toBe(2.5); // the latest (lowest) reading
    expect(sample(text, "litellm_api_key_max_budget_metric")).toBe(10);
    expect(sample(text, "process_start_time_seconds")).toBeGreaterThan(0); // prom-client would omit it
    expect(text).not.toContain("worker");
  });

  it("is one gateway's text for one worker", async () => {
    const single = createMetrics();
    single.requests.inc({ ...caller, requested_model: "general", status_code: "200" });
    const merged = await merge([await single.registry.getMetricsAsJSON()]);
    const names = (t: string) =>
      t
        .split("\n")
        .filter((l) => l.startsWith("# TYPE"))
        .sort();
    expect(names(merged)).toEqual(names(await single.registry.metrics()));
  });
});
