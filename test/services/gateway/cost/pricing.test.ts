import { describe, expect, it } from "vitest";
import { billOf, tierOf } from "../../../../services/gateway/src/cost/bill.js";
import { toPrice } from "../../../../services/gateway/src/cost/list-prices.js";
import { isPriced, listPrice, maxPrice, priceOf } from "../../../../services/gateway/src/cost/pricing.js";
import { deployment } from "./deployment.js";

/**
 * The providers' published prices, USD per million tokens (docs/cost.md, "Agreement with the pricing pages", names
 * each page): input, cached input (OpenAI's "Cached input"; Anthropic's "Cache hits and refreshes"), 5-minute and
 * 1-hour cache writes (Anthropic), output, and the long-context tier above 200,000 input tokens where published.
 */
/** Claude Sonnet 4.5, with its long-context tier. */
const sonnet45 = {
  input: 3,
  cacheWrite: 3.75,
  cacheWrite1h: 6,
  cacheRead: 0.3,
  output: 15,
  above200k: { input: 6, output: 22.5, cacheRead: 0.6 },
};

const published: [
  model: string,
  figures: {
    input: number;
    output: number;
    cacheRead?: number;
    cacheWrite?: number;
    cacheWrite1h?: number;
    above200k?: { input: number; output: number; cacheRead?: number };
  },
][] = [
  ["openai/gpt-4o", { input: 2.5, cacheRead: 1.25, output: 10 }],
  ["openai/gpt-4o-2024-08-06", { input: 2.5, cacheRead: 1.25, output: 10 }],
  ["openai/gpt-4o-mini", { input: 0.15, cacheRead: 0.075, output: 0.6 }],
  ["openai/gpt-4.1", { input: 2, cacheRead: 0.5, output: 8 }],
  ["openai/o3", { input: 2, cacheRead: 0.5, output: 8 }],
  ["openai/gpt-5-mini", { input: 0.25, cacheRead: 0.025, output: 2 }],
  ["anthropic/claude-sonnet-4-5", sonnet45],
  ["anthropic/claude-haiku-4-5", { input: 1, cacheWrite: 1.25, cacheWrite1h: 2, cacheRead: 0.1, output: 5 }],
  [
    "anthropic/claude-opus-4-1",
    { input: 15, cacheWrite: 18.75, cacheWrite1h: 30, cacheRead: 1.5, output: 75 },
  ],
  [
    "anthropic/claude-3-5-haiku-20241022",
    { input: 0.8, cacheWrite: 1, cacheWrite1h: 1.6, cacheRead: 0.08, output: 4 },
  ],
  // Gemini through Google's OpenAI-compatible endpoint (`openai/` with its api_base).
  [
    "openai/gemini-2.5-pro",
    { input: 1.25, cacheRead: 0.125, output: 10, above200k: { input: 2.5, output: 15, cacheRead: 0.25 } },
  ],
  // Mistral's API as `openai/` with its api_base; `mistral-medium-2508` is Mistral Medium 3.1.
  ["openai/mistral-medium-2508", { input: 0.4, output: 2 }],
  // A Claude model behind an OpenAI-compatible proxy keeps its list price.
  ["openai/claude-sonnet-4-5", sonnet45],
];

describe("list prices from the price catalogue (@pydantic/genai-prices) equal the published prices", () => {
  it.each(published)("%s", (model, figures) => {
    const price = priceOf(deployment(model));
    const perMillion = (usd: number | undefined) => (usd === undefined ? undefined : usd * 1e6);
    expect(perMillion(price.input)).toBeCloseTo(figures.input, 10);
    expect(perMillion(price.output)).toBeCloseTo(figures.output, 10);
    for (const part of ["cacheRead", "cacheWrite", "cacheWrite1h"] as const) {
      if (figures[part] === undefined) continue;
      expect(perMillion(price[part]), part).toBeCloseTo(figures[part], 10);
    }
    if (figures.above200k !== undefined) {
      expect(perMillion(price.inputAbove200k)).toBeCloseTo(figures.above200k.input, 10);
      expect(perMillion(price.outputAbove200k)).toBeCloseTo(figures.above200k.output, 10);
      // The tier's cache-read price as bill.ts applies it (its own, or scaled with the input price).
      const tier = tierOf(price, 200_001);
      expect(perMillion(tier.cacheRead)).toBeCloseTo(figures.above200k.cacheRead ?? 0, 10);
    } else {
      expect(price.inputAbove200k).toBeUndefined();
    }
    expect(isPriced(deployment(model))).toBe(true);
  });

  it("does not price an open-weight model from a host's price list (a self-hosted model stays unpriced)", () => {
    // Groq's and Together's model ids: the catalogue prices them under those hosts, which are not searched.
    for (const model of ["openai/llama-3.1-8b-instant", "openai/meta-llama/Llama-3.3-70B-Instruct-Turbo"])
      expect(isPriced(deployment(model)), model).toBe(false);
  });

  it("reads a tiered catalogue price: its base, and the tier at 200,000 tokens as the long-context part", () => {
    const price = toPrice({
      input_mtok: { base: 2, tiers: [{ start: 200_000, price: 4 }] } as never,
      output_mtok: { base: 10, tiers: [{ start: 128_000, price: 20 }] } as never,
      cache_write_1h_mtok: 4,
      input_audio_mtok: 40,
    });
    expect(price).toEqual({
      input: 2e-6,
      inputAbove200k: 4e-6,
      output: 1e-5, // a tier at another threshold is not represented
      cacheWrite1h: 4e-6,
      inputAudio: 4e-5,
    });
  });

  it("model_info.base_model names the list price of a deployment with a private name", () => {
    const price = priceOf(deployment("openai/my-deployment", { baseModel: "gpt-4o-mini" }));
    expect(price.input * 1e6).toBeCloseTo(0.15, 10);
    expect(isPriced(deployment("openai/my-deployment", { baseModel: "gpt-4o-mini" }))).toBe(true);
  });

  it("an unknown model has no list price and costs 0", () => {
    expect(listPrice("openai", "llama3")).toBeUndefined();
    expect(priceOf(deployment("openai/llama3"))).toEqual({ input: 0, output: 0 });
    expect(isPriced(deployment("openai/llama3"))).toBe(false);
  });

  it("the deployment's own costs win over the catalogue, key by key, and only both of them make it priced", () => {
    const own = deployment("openai/gpt-4o", { inputCostPerToken: 1e-6, outputCostPerToken: 0 });
    // The list's cache-read price stays (per-part prices merge key by key): set cache_read_input_token_cost too.
    expect(priceOf(own)).toEqual({ input: 1e-6, output: 0, cacheRead: 1.25e-6 });
    const parts = deployment("openai/gpt-4o", { priceParts: { cacheRead: 1e-7, outputReasoning: 2e-5 } });
    expect(priceOf(parts)).toMatchObject({
      input: 2.5e-6,
      output: 1e-5,
      cacheRead: 1e-7,
      outputReasoning: 2e-5,
    });
    expect(isPriced(deployment("openai/llama3", { inputCostPerToken: 1e-6 }))).toBe(false);
    expect(isPriced(deployment("openai/llama3", { inputCostPerToken: 0, outputCostPerToken: 0 }))).toBe(true);
  });

  it("maxPrice takes the highest price any input or output token may be billed at in a group", () => {
    const price = maxPrice([deployment("openai/gpt-4o-mini"), deployment("anthropic/claude-haiku-4-5")]);
    // Claude Haiku 4.5: $1 input, but a 1-hour cache write costs 2× that; $5 output.
    expect(price.input * 1e6).toBeCloseTo(2, 10);
    expect(price.output * 1e6).toBeCloseTo(5, 10);
  });

  it("maxPrice takes audio and reasoning prices, and the long-context tier only for a prompt that may reach it", () => {
    const d = deployment("openai/custom", {
      inputCostPerToken: 1e-6,
      outputCostPerToken: 2e-6,
      priceParts: { inputAudio: 4e-6, outputReasoning: 3e-6, inputAbove200k: 5e-6, outputAbove200k: 6e-6 },
    });
    expect(maxPrice([d], 10_000)).toEqual({ input: 4e-6, output: 3e-6 });
    expect(maxPrice([d], 200_001)).toEqual({ input: 5e-6, output: 6e-6 });
  });

  it("maxPrice is never below what the bill charges a token, long-context 1-hour cache writes included", () => {
    const sonnet = deployment("anthropic/claude-sonnet-4-5");
    const prompt = 200_001;
    // A prompt of 200,001 tokens, all written to the 1-hour cache: the bill's price of one such token.
    const zero = {
      input: 0,
      input_audio: 0,
      cache_read: 0,
      cache_write_5m: 0,
      cache_write_1h: prompt,
      output: 0,
      output_reasoning: 0,
      output_audio: 0,
      accepted_prediction: 0,
      rejected_prediction: 0,
      web_search_requests: 0,
    };
    const billed =
      billOf(priceOf(sonnet), { prompt_tokens: prompt, completion_tokens: 0, breakdown: zero }) / prompt;
    expect(billed).toBeGreaterThan(priceOf(sonnet).input);
    expect(maxPrice([sonnet], prompt).input).toBeGreaterThanOrEqual(billed * (1 - 1e-12));
  });
});
