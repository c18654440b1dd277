/**
 * The providers' usage readers agree on cache writes however they are reported: Anthropic's total
 * (`cache_creation_input_tokens`), or only its 5-minute / 1-hour split (`cache_creation`), as a LiteLLM proxy in
 * front of an Anthropic model may send them in an OpenAI-shaped `usage`.
 */
import { describe, expect, it } from "vitest";
import { anthropicUsage, openAiUsage } from "../../../../services/gateway/src/usage/provider-usage.js";

const split = { ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 200 };

describe("cache writes", () => {
  it("are read from the split alone, by the OpenAI-shaped reader as by Anthropic's", () => {
    const openai = openAiUsage({ prompt_tokens: 1000, completion_tokens: 10, cache_creation: split })!;
    expect(openai.breakdown).toMatchObject({ input: 500, cache_write_5m: 300, cache_write_1h: 200 });
    const anthropic = anthropicUsage({ input_tokens: 500, output_tokens: 10, cache_creation: split })!;
    expect(anthropic.breakdown).toMatchObject({ input: 500, cache_write_5m: 300, cache_write_1h: 200 });
    expect(anthropic.prompt_tokens).toBe(openai.prompt_tokens);
  });

  it("take the total when it is given, split as the split says", () => {
    const openai = openAiUsage({
      prompt_tokens: 1000,
      completion_tokens: 10,
      cache_creation_input_tokens: 500,
      cache_creation: split,
    })!;
    expect(openai.breakdown).toMatchObject({ input: 500, cache_write_5m: 300, cache_write_1h: 200 });
  });
});
