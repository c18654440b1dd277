/**
 * LiteLLM's per-part model-price keys the gateway reads next to `input_cost_per_token` /
 * `output_cost_per_token`, in `litellm_params` or `model_info` (LiteLLM's custom pricing; key names from
 * LiteLLM's model_prices_and_context_window.json and docs proxy/custom_pricing.md), each USD per token, and the
 * `Price` part it sets. `cost/pricing.ts` merges them over the list price; `cost/bill.ts` applies them.
 */

/**
 * A part of a price other than the plain input and output: the optional fields of `Price`
 * (providers/types.ts, which checks that they match), named here so that config imports no provider code.
 */
export type PricePart =
  | "cacheRead"
  | "cacheWrite"
  | "cacheWrite1h"
  | "inputAudio"
  | "outputAudio"
  | "outputReasoning"
  | "inputAbove200k"
  | "outputAbove200k"
  | "cacheReadAbove200k"
  | "cacheWriteAbove200k";

/** LiteLLM key → the price part it sets. */
export const PRICE_PART_KEYS = {
  cache_read_input_token_cost: "cacheRead",
  cache_creation_input_token_cost: "cacheWrite",
  cache_creation_input_token_cost_above_1hr: "cacheWrite1h",
  input_cost_per_audio_token: "inputAudio",
  output_cost_per_audio_token: "outputAudio",
  output_cost_per_reasoning_token: "outputReasoning",
  input_cost_per_token_above_200k_tokens: "inputAbove200k",
  output_cost_per_token_above_200k_tokens: "outputAbove200k",
  cache_read_input_token_cost_above_200k_tokens: "cacheReadAbove200k",
  cache_creation_input_token_cost_above_200k_tokens: "cacheWriteAbove200k",
} as const satisfies Record<string, PricePart>;

/** The LiteLLM keys of {@link PRICE_PART_KEYS}. */
export type PricePartKey = keyof typeof PRICE_PART_KEYS;

/** The keys, for the config's key sets and schemas. */
export const PRICE_PART_KEY_NAMES = Object.keys(PRICE_PART_KEYS) as PricePartKey[];

/**
 * The price parts set by an entry: `params` (litellm_params) wins over `info` (model_info), key by key; undefined
 * when neither sets any. Values are USD per token, already validated (non-negative numbers).
 */
export function pricePartsOf(
  params: Partial<Record<PricePartKey, number>>,
  info: Partial<Record<PricePartKey, number>> | undefined,
): Partial<Record<PricePart, number>> | undefined {
  const parts: Partial<Record<PricePart, number>> = {};
  let any = false;
  for (const key of PRICE_PART_KEY_NAMES) {
    const value = params[key] ?? info?.[key];
    if (value === undefined) continue;
    parts[PRICE_PART_KEYS[key]] = value;
    any = true;
  }
  return any ? parts : undefined;
}
