/**
 * A model's list price per token part, in USD per token: the shape the cost modules price calls with and the
 * providers' tables fill in.
 */
import type { PricePart } from "../config/price-keys.js";

/**
 * USD per token. `input` and `output` always; the others only where the provider prices that part apart (an
 * absent one is billed as `input` / `output`, `cost/bill.ts`). Each maps to one of LiteLLM's model-price keys
 * (`config/price-keys.ts`).
 */
export interface Price {
  input: number;
  output: number;
  /** Input read from the prompt cache (`cache_read_input_token_cost`). */
  cacheRead?: number;
  /** Input written to the prompt cache, 5-minute lifetime (`cache_creation_input_token_cost`). */
  cacheWrite?: number;
  /** Input written to the prompt cache, 1-hour lifetime (`cache_creation_input_token_cost_above_1hr`). */
  cacheWrite1h?: number;
  /** Audio input (`input_cost_per_audio_token`). */
  inputAudio?: number;
  /** Audio output (`output_cost_per_audio_token`). */
  outputAudio?: number;
  /** Reasoning output (`output_cost_per_reasoning_token`). */
  outputReasoning?: number;
  /** Input when the prompt exceeds 200,000 tokens (`input_cost_per_token_above_200k_tokens`). */
  inputAbove200k?: number;
  /** Output when the prompt exceeds 200,000 tokens (`output_cost_per_token_above_200k_tokens`). */
  outputAbove200k?: number;
  /** Cache reads when the prompt exceeds 200,000 tokens (`cache_read_input_token_cost_above_200k_tokens`). */
  cacheReadAbove200k?: number;
  /** Cache writes when the prompt exceeds 200,000 tokens (`cache_creation_input_token_cost_above_200k_tokens`). */
  cacheWriteAbove200k?: number;
}

/** Compile-time check: {@link Price}'s optional parts are exactly config's `PricePart` names. */
export type PricePartsMatch = [Exclude<keyof Price, "input" | "output">] extends [PricePart]
  ? [PricePart] extends [Exclude<keyof Price, "input" | "output">]
    ? true
    : never
  : never;
const pricePartsMatch: PricePartsMatch = true;
void pricePartsMatch;
