/**
 * The response cache's metrics. Hits, misses and cached tokens under LiteLLM's names
 * (`litellm_cache_hits_metric`, `litellm_cache_misses_metric`, `litellm_cached_tokens_metric`, LiteLLM docs
 * proxy/prometheus.md; `_total` added as prom-client exposes counters, like the gateway's other LiteLLM
 * counters); the dollars hits saved under the gateway's own name (LiteLLM has none). Labels: `model` (the
 * resolved alias, never the client's string) and `call_type` (LiteLLM's), both bounded by the config.
 */
import { Counter, type Registry } from "prom-client";

type Labels = "model" | "call_type";

/** The four cache counters. */
export interface ResponseCacheMetrics {
  /** `litellm_cache_hits_metric_total`: requests answered from the cache. */
  hits: Counter<Labels>;
  /** `litellm_cache_misses_metric_total`: requests looked up and not found (they went upstream). */
  misses: Counter<Labels>;
  /** `litellm_cached_tokens_metric_total`: tokens (prompt + completion) of the answers served from the cache. */
  cachedTokens: Counter<Labels>;
  /** `gateway_cache_saved_spend_usd_total`: USD the hits would have cost upstream. */
  savedSpend: Counter<Labels>;
}

const existing = <T>(registry: Registry, name: string, make: () => T): T =>
  (registry.getSingleMetric(name) as T | undefined) ?? make();

/** The cache metrics on `registry`, created on first use. */
export function responseCacheMetrics(registry: Registry): ResponseCacheMetrics {
  const counter = (name: string, help: string) =>
    existing(
      registry,
      name,
      () => new Counter({ name, help, labelNames: ["model", "call_type"], registers: [registry] }),
    );
  return {
    hits: counter("litellm_cache_hits_metric_total", "Requests answered from the response cache."),
    misses: counter(
      "litellm_cache_misses_metric_total",
      "Requests looked up in the response cache and not found.",
    ),
    cachedTokens: counter(
      "litellm_cached_tokens_metric_total",
      "Tokens (prompt + completion) of the answers served from the response cache.",
    ),
    savedSpend: counter(
      "gateway_cache_saved_spend_usd_total",
      "USD the answers served from the response cache cost when they were first answered.",
    ),
  };
}

/**
 * `gateway_cache_semantic_swept_rows_total` (no labels; LiteLLM has no such metric): expired semantic cache rows
 * the sweeper deleted (`semantic/sweeper.ts`), created on first use. Registered only with the semantic cache on.
 */
export function semanticSweptRowsCounter(registry: Registry): Counter {
  const name = "gateway_cache_semantic_swept_rows_total";
  return existing(
    registry,
    name,
    () =>
      new Counter({
        name,
        help: "Expired semantic response cache rows deleted by this instance's sweeper.",
        registers: [registry],
      }),
  );
}
