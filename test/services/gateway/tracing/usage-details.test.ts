/**
 * A call's usage as Langfuse usage details: parts that do not overlap (Langfuse sums every `input*` key as input
 * and every `output*` key as output), cache reads named as Langfuse's OpenAI or Anthropic model definitions name
 * them, zero parts left out.
 */
import { describe, expect, it } from "vitest";
import { usageDetailsOf } from "../../../../services/gateway/src/tracing/usage-details.js";
import { anthropicUsage, openAiUsage } from "../../../../services/gateway/src/usage/provider-usage.js";

const sum = (details: Record<string, number>, part: string) =>
  Object.entries(details)
    .filter(([key]) => key.includes(part))
    .reduce((n, [, v]) => n + v, 0);

describe("usageDetailsOf", () => {
  it("splits OpenAI's cached, audio and reasoning tokens out of input and output", () => {
    const usage = openAiUsage({
      prompt_tokens: 1000,
      completion_tokens: 300,
      total_tokens: 1300,
      prompt_tokens_details: { cached_tokens: 800, audio_tokens: 100 },
      completion_tokens_details: { reasoning_tokens: 200, audio_tokens: 0 },
    })!;
    const details = usageDetailsOf(usage, "openai");
    expect(details).toEqual({
      input: 100,
      input_audio_tokens: 100,
      input_cached_tokens: 800,
      output: 100,
      output_reasoning_tokens: 200,
      total: 1300,
    });
    expect(sum(details, "input")).toBe(1000);
    expect(sum(details, "output")).toBe(300);
  });

  it("names Anthropic's cache reads and writes as input_cache_read and input_cache_creation(_1h)", () => {
    const usage = anthropicUsage({
      input_tokens: 50,
      cache_read_input_tokens: 4000,
      cache_creation_input_tokens: 3000,
      cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
      output_tokens: 20,
    })!;
    expect(usageDetailsOf(usage, "anthropic")).toEqual({
      input: 50,
      input_cache_read: 4000,
      input_cache_creation: 1000,
      input_cache_creation_1h: 2000,
      output: 20,
      total: 7070,
    });
  });

  it("an estimate without a breakdown is input, output and total", () => {
    const details = usageDetailsOf({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }, undefined);
    expect(details).toEqual({ input: 10, output: 5, total: 15 });
  });
});
