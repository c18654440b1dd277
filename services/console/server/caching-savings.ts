/**
 * What prompt caching saved: for every token read from a provider's prompt cache, the price of a fresh input
 * token minus the price of a cached one, at the prices the gateway bills the deployment at (`/model/info`,
 * LiteLLM's keys, USD per token), in the call's price tier. Cache writes (which cost more than fresh input on
 * Anthropic) are not subtracted: the figure is what the reads saved, not caching's net effect.
 */
import type { ModelInfoResponse, UsageResponse } from "@platform/admin-api";

/** Caching over a period: tokens read from the prompt cache and what they saved (USD). */
export interface CachingSavings {
  /** Prompt tokens read from the prompt cache. */
  cached_tokens: number;
  /** USD: what the cached tokens would have cost as fresh input minus what they cost; never negative. */
  saved: number;
  /** Of `cached_tokens`, those of a deployment the gateway no longer lists (no price known, not in `saved`). */
  unpriced_tokens: number;
}

type ModelInfo = ModelInfoResponse["data"][number]["model_info"];

/**
 * USD per token of a fresh and of a cached input token of `info`, in the long-context tier (prompts over
 * 200,000 tokens) when `longContext` and the deployment has one: its own cache-read tier price, else the
 * cache-read price scaled as its input price is (as the gateway bills it, docs/cost.md). A deployment without a
 * cache-read price bills cached tokens as fresh input.
 */
export function inputPrices(info: ModelInfo, longContext: boolean): { fresh: number; cached: number } {
  const cacheRead = info.cache_read_input_token_cost ?? info.input_cost_per_token;
  const above = info.input_cost_per_token_above_200k_tokens;
  if (!longContext || above === undefined) return { fresh: info.input_cost_per_token, cached: cacheRead };
  const scale = info.input_cost_per_token > 0 ? above / info.input_cost_per_token : 1;
  return { fresh: above, cached: info.cache_read_input_token_cost_above_200k_tokens ?? cacheRead * scale };
}

/** The {@link CachingSavings} of `/spend/usage`'s `cache_reads` at the prices of `/model/info`. */
export function cachingSavings(
  cacheReads: UsageResponse["cache_reads"],
  models: ModelInfoResponse,
): CachingSavings {
  const byId = new Map(models.data.map((d) => [d.model_info.id, d.model_info]));
  const result: CachingSavings = { cached_tokens: 0, saved: 0, unpriced_tokens: 0 };
  for (const read of cacheReads) {
    result.cached_tokens += read.cached_tokens;
    const info = read.model_id === null ? undefined : byId.get(read.model_id);
    if (info === undefined) {
      result.unpriced_tokens += read.cached_tokens;
      continue;
    }
    const { fresh, cached } = inputPrices(info, read.long_context);
    result.saved += read.cached_tokens * Math.max(0, fresh - cached);
  }
  return result;
}
