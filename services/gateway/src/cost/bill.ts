/**
 * What a call costs as the provider bills it, in USD: its usage divided by price ({@link UsageBreakdown}), each
 * part at its own price ({@link Price}, USD per token):
 *
 *     uncached input × input (audio input × inputAudio)
 *   + cache reads × cacheRead
 *   + 5-minute cache writes × cacheWrite + 1-hour cache writes × cacheWrite1h
 *   + output × output (reasoning × outputReasoning, audio output × outputAudio: parts of the output, never counted twice)
 *
 * with the long-context tier (`inputAbove200k`, `outputAbove200k`, `cacheReadAbove200k`, `cacheWriteAbove200k`)
 * for every token of a call whose prompt (`prompt_tokens`: uncached input, cache reads and writes together)
 * exceeds 200,000 tokens, when the price has such a tier (Anthropic's pricing page, "Long context pricing"; LiteLLM's
 * `*_above_200k_tokens` keys). A part without its own price is billed at the plain input or output price (never
 * below what the provider could charge for it); a usage without a breakdown (the gateway's estimate) is billed as
 * plain input and output. Web searches are recorded, not priced (no LiteLLM per-request key is read).
 *
 * This is the booked cost of a finished call. A reservation, made before the usage is known, assumes the highest
 * price any of its tokens may be billed at, in the same tier ({@link tierOf}; `maxPrice` in pricing.ts).
 */

import type { Usage, UsageBreakdown } from "../usage/types.js";
import type { Price } from "./price.js";

/** Prompts longer than this many tokens are billed at the long-context tier (where one is priced). */
export const LONG_CONTEXT_THRESHOLD = 200_000;

/** The prices that apply to one call: the long-context tier's when its prompt is over the threshold. */
export function tierOf(price: Price, promptTokens: number): Price {
  if (promptTokens <= LONG_CONTEXT_THRESHOLD || price.inputAbove200k === undefined) return price;
  const input = price.inputAbove200k;
  // A cache price without its own tier keeps its ratio to the input price.
  const scale = price.input > 0 ? input / price.input : 1;
  const scaled = (part: number | undefined) => (part === undefined ? undefined : part * scale);
  return {
    ...price,
    input,
    output: price.outputAbove200k ?? price.output,
    cacheRead: price.cacheReadAbove200k ?? scaled(price.cacheRead),
    cacheWrite: price.cacheWriteAbove200k ?? scaled(price.cacheWrite),
    cacheWrite1h: scaled(price.cacheWrite1h),
  };
}

/** USD for a breakdown at `p` (already the call's tier). */
function partsCost(b: UsageBreakdown, p: Price): number {
  const write5m = p.cacheWrite ?? p.input;
  const audioIn = Math.min(b.input_audio, b.input);
  const reasoning = Math.min(b.output_reasoning, b.output);
  const audioOut = Math.min(b.output_audio, b.output - reasoning);
  return (
    (b.input - audioIn) * p.input +
    audioIn * (p.inputAudio ?? p.input) +
    b.cache_read * (p.cacheRead ?? p.input) +
    b.cache_write_5m * write5m +
    b.cache_write_1h * (p.cacheWrite1h ?? write5m) +
    (b.output - reasoning - audioOut) * p.output +
    reasoning * (p.outputReasoning ?? p.output) +
    audioOut * (p.outputAudio ?? p.output)
  );
}

/**
 * USD for one call's `usage` at `price` (see the module comment). Not rounded (`roundCost` in
 * accounting/call-accounting.ts rounds the booked figure). No throws.
 */
export function billOf(
  price: Price,
  usage: Pick<Usage, "prompt_tokens" | "completion_tokens" | "breakdown">,
): number {
  const p = tierOf(price, usage.prompt_tokens);
  if (usage.breakdown === undefined)
    return usage.prompt_tokens * p.input + usage.completion_tokens * p.output;
  return partsCost(usage.breakdown, p);
}
