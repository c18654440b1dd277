/**
 * Merging the workers' registries for GET /metrics: counters and histograms add up, each gauge follows the
 * aggregator its definition names, names and labels stay those of one gateway.
 */
import { describe, expect, it } from "vitest";
import { redisMetrics } from "../../../../services/gateway/src/cache/redis.js";
import { merge } from "../../../../services/gateway/src/cluster/cluster-metrics.js";
import type { Deployment } from "../../../../services/gateway/src/config/types.js";
import type { LimitSubject } from "../../../../services/gateway/src/limits/types.js";
import { createMetrics } from "../../../../services/gateway/src/metrics/metrics.js";
import { recordCallMetrics } from "../../../../services/gateway/src/metrics/record-call.js";

const caller = { hashed_api_key: "h1", api_key_alias: "a", user: "u", team: "", team_alias: "" };
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

  it("includes what the workers recorded through their batches, not yet handed to prom-client", async () => {
    const deployment: Deployment = {
      id: "d1",
      modelName: "general",
      provider: "openai",
      upstreamModel: "m",
      apiBase: "http://upstream.local/v1",
      tags: [],
      created: 0,
    };
    const subject: LimitSubject = {
      scope: "key",
      id: "h1",
      rpmLimit: null,
      tpmLimit: null,
      maxBudget: 10,
      budgetDuration: null,
      budgetResetAt: null,
      spend: 0,
    };
    const recorded = async (calls: number, spend: number) => {
      const metrics = createMetrics();
      for (let i = 0; i < calls; i++) {
        recordCallMetrics(metrics, {
          caller,
          subjects: [{ ...subject, spend: spend + i }],
          requestedModel: "general",
          deployment,
          promptTokens: 1,
          completionTokens: 1,
          totalTokens: 2,
          cost: 0,
          totalMs: 20,
          upstreamMs: 10,
          upstreamHeaders: { "x-ratelimit-remaining-requests": String(100 - i) },
          nowEpochMs: 0,
        });
      }
      return metrics.registry.getMetricsAsJSON();
    };
    const text = await merge([await recorded(3, 0), await recorded(5, 1)]);
    expect(sample(text, "litellm_request_total_latency_metric_count")).toBe(8);
    expect(sample(text, "litellm_overhead_latency_metric_bucket", 'le="0.01"')).toBe(8);
    expect(sample(text, "litellm_llm_api_latency_metric_sum")).toBeCloseTo(0.08);
    expect(sample(text, "litellm_remaining_requests_metric")).toBe(96); // each worker's last, the lowest
    expect(sample(text, "litellm_remaining_api_key_budget_metric")).toBe(5); // 10 − (1 + 4)
    expect(sample(text, "litellm_total_tokens_metric_total")).toBe(16);
  });
});
