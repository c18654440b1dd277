/**
 * The input bound never falls below what a model counts (its own tokenizer where the gateway has it, o200k as
 * the densest public stand-in elsewhere), stays within 10 % for English on OpenAI models, and charges images
 * by their documented maxima instead of their bytes.
 */
import fc from "fast-check";
import { countTokens as cl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import type { Deployment } from "../../../../services/gateway/src/config/types.js";
import { IMAGE_TOKEN_BOUND, inputTokenBound } from "../../../../services/gateway/src/cost/input-bound.js";

const deployment = (provider: Deployment["provider"], upstreamModel: string): Deployment => ({
  id: upstreamModel,
  modelName: upstreamModel,
  provider,
  upstreamModel,
  apiBase: "http://127.0.0.1:9/v1",
  tags: [],
  created: 0,
});

const gpt4o = deployment("openai", "gpt-4o");
const claude = deployment("anthropic", "claude-sonnet-4-5");
const selfHosted = deployment("openai", "llama-3.1-70b");

/** What OpenAI counts for a chat prompt: each message's text, 3 tokens a message and 3 to prime the answer. */
const chatTokens = (texts: string[]) => texts.reduce((n, t) => n + o200k(t) + 3, 3);

const chat = (...texts: string[]) => ({
  model: "m",
  messages: texts.map((content) => ({ role: "user", content })),
});

describe("inputTokenBound", () => {
  it("bounds 90 KB of CJK from above for a model without a tokenizer (the old 4-bytes rule reserved a quarter)", () => {
    const text = "漢字かな交じり文".repeat(3750); // 30,000 characters, 90,000 bytes
    for (const d of [claude, selfHosted]) {
      const bound = inputTokenBound(chat(text), [d]);
      expect(bound).toBeGreaterThanOrEqual(Buffer.byteLength(text));
      expect(bound).toBeGreaterThan(Buffer.byteLength(text) / 4 + 20_000);
    }
    // Tokenized whole, BPE's cost grows with the square of this one long pre-token: a tenth of it is compared.
    const tenth = text.slice(0, 3000);
    expect(inputTokenBound(chat(tenth), [gpt4o])).toBeGreaterThanOrEqual(chatTokens([tenth]));
  });

  it("stays within 10 % of the real count for English on an OpenAI model", () => {
    const text =
      "The quick brown fox jumps over the lazy dog while the platform team reviews the monthly budget report. ".repeat(
        50,
      );
    const real = chatTokens([text]);
    // No time budget: on a loaded machine the default one could count part of it by bytes (still a bound).
    const bound = inputTokenBound(chat(text), [gpt4o], Number.POSITIVE_INFINITY);
    expect(bound).toBeGreaterThanOrEqual(real);
    expect(bound).toBeLessThanOrEqual(real * 1.1);
  });

  it("takes the larger count when the plan mixes tokenizers, and bytes when any model has none", () => {
    const text = "数字 1234567890 ".repeat(100);
    const both = inputTokenBound(chat(text), [gpt4o, deployment("openai", "gpt-4-turbo")]);
    expect(both).toBeGreaterThanOrEqual(inputTokenBound(chat(text), [gpt4o]));
    // Not o200k's count alone: GPT-4 Turbo's cl100k counts Japanese higher, and the bound covers it.
    const japanese = "漢字かな交じり文の例です。".repeat(100);
    expect(cl100k(japanese)).toBeGreaterThan(o200k(japanese));
    const mixed = inputTokenBound(chat(japanese), [gpt4o, deployment("openai", "gpt-4-turbo")]);
    expect(mixed).toBeGreaterThanOrEqual(cl100k(japanese));
    expect(inputTokenBound(chat(text), [gpt4o, claude])).toBeGreaterThanOrEqual(Buffer.byteLength(text));
  });

  it("never falls below o200k's count or the bytes' bound, for any text (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "binary", maxLength: 100 }), { minLength: 1, maxLength: 5 }),
        (texts) => {
          expect(inputTokenBound(chat(...texts), [gpt4o])).toBeGreaterThanOrEqual(chatTokens(texts));
          const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
          expect(inputTokenBound(chat(...texts), [claude])).toBeGreaterThanOrEqual(bytes);
        },
      ),
      { seed: 28, numRuns: 50 },
    );
  });

  it("charges an image its documented maximum, not its bytes, wherever it is given", () => {
    const data = `data:image/png;base64,${"A".repeat(1_000_000)}`;
    const parts = [
      { type: "image_url", image_url: { url: data, detail: "high" } },
      { type: "input_image", image_url: data },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "A".repeat(1_000_000) } },
      { type: "image_url", image_url: { url: "https://example.com/a.png" } },
    ];
    for (const part of parts) {
      const body = { model: "m", messages: [{ role: "user", content: [part] }] };
      const onSelfHosted = inputTokenBound(body, [selfHosted]);
      expect(onSelfHosted).toBeGreaterThanOrEqual(IMAGE_TOKEN_BOUND);
      expect(onSelfHosted).toBeLessThan(IMAGE_TOKEN_BOUND + 100);
      // gpt-4o: at most 85 + 170 × 8 tiles; gpt-4o-mini's tiles cost 5,667 each.
      expect(inputTokenBound(body, [gpt4o])).toBeGreaterThanOrEqual(1_445);
      expect(inputTokenBound(body, [deployment("openai", "gpt-4o-mini")])).toBeGreaterThanOrEqual(48_169);
    }
  });

  it("counts token-id prompts by their length", () => {
    const ids = Array.from({ length: 5000 }, (_, i) => i);
    expect(inputTokenBound({ model: "m", prompt: ids }, [selfHosted])).toBeGreaterThanOrEqual(5000);
    expect(inputTokenBound({ model: "m", prompt: ids }, [selfHosted])).toBeLessThan(5100);
  });
});

describe("the tokenizer's time budget", () => {
  it("counts text made to be expensive by its bytes once the budget is spent: still an upper bound", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const symbols = Array.from({ length: 90_000 }, () =>
      String.fromCharCode(33 + Math.floor(random() * 94)),
    ).join("");
    const bound = inputTokenBound(chat(symbols), [gpt4o]);
    // Random symbols take ~400 ms to tokenize whole; within the budget most of the text counts its bytes.
    expect(bound).toBeGreaterThan(symbols.length * 0.9);
    expect(bound).toBeLessThanOrEqual(Buffer.byteLength(symbols) + 100);
  });
});
