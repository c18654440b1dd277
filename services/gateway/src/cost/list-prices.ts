/**
 * List prices from maintained data: `@pydantic/genai-prices` (Pydantic's price catalogue, npm, version pinned in
 * services/gateway/package.json; `npm run prices:update` moves the pin and prints what changed), read from the data
 * bundled in the package: the gateway never fetches prices at run time (the package's `updatePrices` is not called).
 *
 * A model is looked up under the deployment's provider first (`openai`, `anthropic`), then under the model makers'
 * own APIs ({@link FALLBACK_PROVIDERS}: a Claude model behind an OpenAI-compatible proxy, Gemini through Google's
 * OpenAI-compatible endpoint, Mistral's API as `openai/` with its `api_base`). Resellers and hosts of open-weight
 * models (Groq, Together, Bedrock, …) are not searched: a self-hosted Llama is not billed at some host's price.
 *
 * The catalogue's keys (USD per million tokens; docs: the package README, "Pricing fields") map to {@link Price}:
 *
 *   input_mtok → input          output_mtok → output          cache_read_mtok → cacheRead
 *   cache_write_mtok → cacheWrite   cache_write_1h_mtok → cacheWrite1h
 *   input_audio_mtok → inputAudio   output_audio_mtok → outputAudio
 *
 * A tiered price (`{base, tiers: [{start, price}]}`: every token of a call whose input exceeds `start` tokens is
 * billed at the tier's price, the package's own rule) gives its base, and its tier at `start` 200,000 gives the
 * long-context part (`inputAbove200k`, `outputAbove200k`, `cacheReadAbove200k`, `cacheWriteAbove200k`: bill.ts's
 * tier). Tiers at other thresholds are not represented (the base price applies; docs/cost.md lists the models).
 * Reasoning tokens are output in the catalogue (no price of their own). Per-request prices (web searches) are not
 * read. The catalogue has no output-token limits.
 */
import { calcPrice, type ModelPrice } from "@pydantic/genai-prices";
import type { ProviderName } from "../config/types.js";
import { LONG_CONTEXT_THRESHOLD } from "./bill.js";
import { memoByModel } from "./model-memo.js";
import type { Price } from "./price.js";

/** Catalogue providers searched after the deployment's own, in order: the model makers' first-party APIs. */
export const FALLBACK_PROVIDERS = ["openai", "anthropic", "google", "mistral", "deepseek", "x-ai", "cohere"];

/** A list price and where it came from. */
export interface ListedPrice {
  price: Price;
  /** The catalogue's provider and model ids, e.g. `anthropic` / `claude-sonnet-4-5`. */
  provider: string;
  model: string;
}

type Tiered = { base: number; tiers: readonly { start: number; price: number }[] };
type PriceValue = ModelPrice[string];

const PARTS = {
  input_mtok: ["input", "inputAbove200k"],
  output_mtok: ["output", "outputAbove200k"],
  cache_read_mtok: ["cacheRead", "cacheReadAbove200k"],
  cache_write_mtok: ["cacheWrite", "cacheWriteAbove200k"],
  cache_write_1h_mtok: ["cacheWrite1h", undefined],
  input_audio_mtok: ["inputAudio", undefined],
  output_audio_mtok: ["outputAudio", undefined],
} as const satisfies Record<string, readonly [keyof Price, keyof Price | undefined]>;

/**
 * The list price of `model` (an upstream model name such as `gpt-4o-2024-08-06`; the catalogue's own matching
 * rules resolve dated snapshots and aliases), searching `provider` first, then {@link FALLBACK_PROVIDERS};
 * undefined when the catalogue has no price for it. USD per token. Memoized. No throws.
 */
export const catalogPrice: (provider: ProviderName, model: string) => ListedPrice | undefined = memoByModel(
  (provider, model) => lookUp(provider, model),
);

function lookUp(provider: ProviderName, model: string): ListedPrice | undefined {
  for (const providerId of [provider, ...FALLBACK_PROVIDERS.filter((p) => p !== provider)]) {
    const result = calcPrice({ input_tokens: 0, output_tokens: 0 }, model, { providerId });
    if (result === null) continue;
    return {
      price: toPrice(result.model_price),
      provider: result.provider.id,
      model: result.model.id,
    };
  }
  return undefined;
}

/** A catalogue price (USD per million tokens, plain or tiered) as a {@link Price} (USD per token). */
export function toPrice(modelPrice: ModelPrice): Price {
  const price: Price = { input: 0, output: 0 };
  const parts = price as unknown as Record<string, number>;
  for (const [key, [part, above200k]] of Object.entries(PARTS)) {
    const value: PriceValue = modelPrice[key];
    if (value === undefined) continue;
    if (typeof value === "number") {
      parts[part] = value / 1e6;
      continue;
    }
    const tiered = value as Tiered;
    parts[part] = tiered.base / 1e6;
    const tier = tiered.tiers.find((t) => t.start === LONG_CONTEXT_THRESHOLD);
    if (tier !== undefined && above200k !== undefined) parts[above200k] = tier.price / 1e6;
  }
  return price;
}
