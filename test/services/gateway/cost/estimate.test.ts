import { describe, expect, it } from "vitest";
import {
  estimatePromptTokens,
  estimatePromptTokensOfText,
  jsonBytes,
} from "../../../../services/gateway/src/cost/estimate.js";

describe("prompt estimate", () => {
  it("counts the bytes of the body's compact JSON, UTF-8 included, without serialising it", () => {
    const bodies: unknown[] = [
      { model: "general", messages: [{ role: "user", content: "hello" }] },
      {
        messages: [{ role: "user", content: [{ type: "text", text: "日本語のテキスト 🎉" }] }],
        n: 1.5,
        ok: true,
      },
      { a: [1, [2, [3, null]], {}], b: [], c: 'quote " and \\ slash' },
    ];
    for (const body of bodies) {
      // Escapes (\" and \\) are the only difference: the walk counts the raw characters.
      const exact = Buffer.byteLength(JSON.stringify(body));
      expect(jsonBytes(body)).toBeLessThanOrEqual(exact);
      expect(jsonBytes(body)).toBeGreaterThanOrEqual(exact - 4);
    }
  });

  it("walks bodies nested deeper than the stack allows JSON.stringify", () => {
    let deep: unknown = "x";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(jsonBytes({ messages: deep })).toBeGreaterThan(200_000);
  });

  it("is a quarter of the JSON bytes, rounded up", () => {
    const body = { model: "m", messages: [{ role: "user", content: "x".repeat(1000) }] };
    expect(estimatePromptTokens(body)).toBe(Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 4));
  });
});

describe("prompt estimate from the body's text", () => {
  it("is a quarter of the text's UTF-8 bytes, spacing included, at least the parsed body's estimate", () => {
    const text = '{ "model": "m",\n  "messages": [{"role": "user", "content": "日本語 🎉"}] }';
    expect(estimatePromptTokensOfText(text)).toBe(Math.ceil(Buffer.byteLength(text) / 4));
    expect(estimatePromptTokensOfText(text)).toBeGreaterThanOrEqual(estimatePromptTokens(JSON.parse(text)));
  });
});
