/**
 * Calls of many keys through recordCallMetrics: the per-key latency histogram, token counter and remaining-limit gauge read (text and
 * get()) as plain prom-client metrics written directly with the same values, and keep one compact slot per key.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { Deployment } from "../../../../services/gateway/src/config/types.js";
import { createMetrics } from "../../../../services/gateway/src/metrics/metrics.js";
import { recordCallMetrics } from "../../../../services/gateway/src/metrics/record-call.js";

const deployments: Deployment[] = ["gpt-x", "gpt-y"].map((upstreamModel, i) => ({
  id: `dep-${i}`,
  modelName: "general",
  provider: "openai",
  upstreamModel,
  apiBase: "http://upstream.local/v1",
  tags: [],
  created: 0,
}));
const KEYS = 300;

describe("per-key series", () => {
  it("read as direct prom-client observes and take one compact slot per label set", async () => {
    const m = createMetrics();
    const referenceRegistry = new Registry();
    const reference = new Histogram({
      name: "litellm_request_total_latency_metric",
      help: "Total latency of a request through the gateway, seconds",
      labelNames: ["requested_model", "model", "hashed_api_key", "api_key_alias"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers: [referenceRegistry],
    });
    const tokens = new Counter({
      name: "litellm_input_tokens_metric_total",
      help: "Input (prompt) tokens",
      labelNames: [
        "hashed_api_key",
        "api_key_alias",
        "user",
        "team",
        "team_alias",
        "requested_model",
        "model",
        "model_id",
      ],
      registers: [referenceRegistry],
    });
    const remaining = new Gauge({
      name: "litellm_remaining_requests_metric",
      aggregator: "min",
      help: "x-ratelimit-remaining-requests returned by the LLM API deployment",
      labelNames: [
        "model_group",
        "api_provider",
        "litellm_model_name",
        "hashed_api_key",
        "api_key_alias",
        "model_id",
      ],
      registers: [referenceRegistry],
    });
    for (let i = 0; i < 3 * KEYS; i++) {
      const k = (i * 7) % KEYS;
      const deployment = deployments[k % 2] as Deployment;
      const caller = {
        hashed_api_key: k.toString(16).padStart(64, "0"),
        api_key_alias: `key-${k}`,
        user: "",
        team: "",
        team_alias: "",
      };
      const totalMs = ((i * 7919) % 400_000) / 3;
      recordCallMetrics(m, {
        caller,
        subjects: [],
        requestedModel: "general",
        deployment,
        promptTokens: i % 5,
        completionTokens: 1,
        totalTokens: 2,
        cost: 0,
        totalMs,
        upstreamMs: totalMs / 2,
        upstreamHeaders: { "x-ratelimit-remaining-requests": String(1000 - i) },
        nowEpochMs: 0,
      });
      remaining.set(
        {
          model_group: "general",
          api_provider: "openai",
          litellm_model_name: deployment.upstreamModel,
          model_id: deployment.id,
          hashed_api_key: caller.hashed_api_key,
          api_key_alias: caller.api_key_alias,
        },
        1000 - i,
      );
      reference.observe(
        {
          requested_model: "general",
          model: `openai/${deployment.upstreamModel}`,
          hashed_api_key: caller.hashed_api_key,
          api_key_alias: caller.api_key_alias,
        },
        totalMs / 1000,
      );
      const tokenLabels = {
        ...caller,
        requested_model: "general",
        model: `openai/${deployment.upstreamModel}`,
        model_id: deployment.id,
      };
      tokens.inc(tokenLabels, i % 5);
    }
    for (const name of [
      "litellm_request_total_latency_metric",
      "litellm_input_tokens_metric_total",
      "litellm_remaining_requests_metric",
    ]) {
      expect(await m.registry.getSingleMetricAsString(name)).toBe(
        await referenceRegistry.getSingleMetricAsString(name),
      );
    }
    expect(JSON.stringify(await m.totalLatency.get())).toBe(JSON.stringify(await reference.get()));
    expect(JSON.stringify(await m.inputTokens.get())).toBe(JSON.stringify(await tokens.get()));
    expect(m.totalLatency.slotCount).toBe(KEYS);
    for (const metric of [m.totalLatency, m.inputTokens, m.spend, m.requests, m.remainingRequests]) {
      expect((metric as unknown as { hashMap?: unknown }).hashMap).toBeUndefined();
    }
  });
});
