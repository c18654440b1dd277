/**
 * A call's usage as Langfuse's `usageDetails` (Langfuse docs, "Model Usage & Cost Tracking": usage types are free
 * keys; the UI sums every type whose key contains `input` as input and `output` as output, and all of them as the
 * total when `total` is absent). So the parts must not overlap: `input` is the uncached text input, `output` the
 * output without its reasoning and audio parts, and each other part has its own key, in the names Langfuse's
 * own model definitions use: `input_cached_tokens` (OpenAI's cache reads) or `input_cache_read` (Anthropic's),
 * `input_cache_creation` (5-minute writes) and `input_cache_creation_1h`, `input_audio_tokens`,
 * `output_reasoning_tokens`, `output_audio_tokens`; `total` is the call's total. Parts that are 0 are left out.
 */

import type { ProviderName } from "../config/types.js";
import type { Usage } from "../usage/types.js";

/** Token counts by Langfuse usage type (see the module comment). */
export type UsageDetails = Record<string, number>;

/** `usage` as Langfuse usage details; `provider` (of the deployment that answered) names the cache reads. */
export function usageDetailsOf(usage: Usage, provider: ProviderName | undefined): UsageDetails {
  const b = usage.breakdown;
  if (b === undefined)
    return { input: usage.prompt_tokens, output: usage.completion_tokens, total: usage.total_tokens };
  const details: UsageDetails = {
    input: b.input - b.input_audio,
    output: b.output - b.output_reasoning - b.output_audio,
    total: usage.total_tokens,
  };
  const parts: Array<[string, number]> = [
    [provider === "anthropic" ? "input_cache_read" : "input_cached_tokens", b.cache_read],
    ["input_cache_creation", b.cache_write_5m],
    ["input_cache_creation_1h", b.cache_write_1h],
    ["input_audio_tokens", b.input_audio],
    ["output_reasoning_tokens", b.output_reasoning],
    ["output_audio_tokens", b.output_audio],
  ];
  for (const [key, tokens] of parts) if (tokens > 0) details[key] = tokens;
  return details;
}
