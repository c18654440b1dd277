import { describe, expect, it } from "vitest";
import type { Deployment } from "../../../../services/gateway/src/config/types.js";
import { billOf } from "../../../../services/gateway/src/cost/bill.js";
import { isPriced, listPrice, maxPrice, priceOf } from "../../../../services/gateway/src/cost/pricing.js";

const deployment = (model: string, extra: Partial<Deployment> = {}): Deployment => {
  const [provider, ...rest] = model.split("/");
  return {
    id: model,
    modelName: model,
    provider: provider as Deployment["provider"],
    upstreamModel: rest.join("/"),
    apiBase: "http://h/v1",
    tags: [],
    created: 0,
    ...extra,
  };
};

describe("prices from the provider tables (providers/<provider>/index.ts)", () => {
  it.each([
    ["openai/gpt-4o", 2.5, 10],
    ["openai/gpt-4o-2024-08-06", 2.5, 10],
    ["openai/gpt-4o-mini", 0.15, 0.6],
    ["openai/gpt-4o-mini-2024-07-18", 0.15, 0.6],
    ["openai/gpt-4.1", 2, 8],
    ["openai/gpt-4.1-mini", 0.4, 1.6],
    ["openai/gpt-4.1-nano", 0.1, 0.4],
    ["openai/o3", 2, 8],
    ["openai/o3-mini", 1.1, 4.4],
    ["openai/o4-mini", 1.1, 4.4],
    ["openai/gpt-5-mini", 0.25, 2],
    ["anthropic/claude-3-5-sonnet-20241022", 3, 15],
    ["anthropic/claude-3-7-sonnet-20250219", 3, 15],
    ["anthropic/claude-3-5-haiku-20241022", 0.8, 4],
    ["anthropic/claude-sonnet-4-20250514", 3, 15],
    ["anthropic/claude-sonnet-4-5", 3, 15],
    ["anthropic/claude-haiku-4-5", 1, 5],
    ["anthropic/claude-opus-4-1", 15, 75],
    ["anthropic/claude-opus-4-5", 5, 25],
    // a Claude model behind an OpenAI-compatible proxy keeps its list price
    ["openai/claude-sonnet-4-5", 3, 15],
  ])("%s costs $%d / $%d per million tokens", (model, input, output) => {
    const price = priceOf(deployment(model));
    expect(price.input * 1e6).toBeCloseTo(input, 10);
    expect(price.output * 1e6).toBeCloseTo(output, 10);
    expect(isPriced(deployment(model))).toBe(true);
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

  it("the deployment's own costs win over the table, and only both of them make it priced", () => {
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
