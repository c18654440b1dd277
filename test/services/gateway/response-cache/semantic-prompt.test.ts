/**
 * What the semantic cache embeds and what must match exactly (`response-cache/semantic/prompt.ts`): the last user
 * message's text (string or text parts) or a text completion's prompt; requests with tools, non-text content, a
 * last message that is not the user's, and other call types are not looked up semantically.
 */
import { describe, expect, it } from "vitest";
import { semanticPrompt } from "../../../../services/gateway/src/response-cache/semantic/prompt.js";

const system = { role: "system", content: "Be brief." };

describe("semanticPrompt", () => {
  it("embeds the last user message and keeps everything else, with that text blanked, as the exact part", () => {
    const body = {
      model: "general",
      temperature: 0,
      messages: [system, { role: "user", content: "Hi there" }],
    };
    expect(semanticPrompt("acompletion", body)).toEqual({
      text: "Hi there",
      exactPart: { model: "general", temperature: 0, messages: [system, { role: "user", content: "" }] },
    });
    expect(body.messages[1]?.content).toBe("Hi there"); // the body itself is left as it was
  });

  it("joins text parts, and takes a text completion's prompt", () => {
    const parts = [
      { type: "text", text: "one" },
      { type: "text", text: "two" },
    ];
    expect(semanticPrompt("acompletion", { messages: [{ role: "user", content: parts }] })?.text).toBe(
      "one\ntwo",
    );
    expect(semanticPrompt("atext_completion", { prompt: "Say hi" })).toEqual({
      text: "Say hi",
      exactPart: { prompt: "" },
    });
  });

  it.each([
    ["tools", "acompletion", { tools: [{ type: "function" }], messages: [{ role: "user", content: "x" }] }],
    ["legacy functions", "acompletion", { functions: [], messages: [{ role: "user", content: "x" }] }],
    [
      "an image part",
      "acompletion",
      { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:" } }] }] },
    ],
    ["a last assistant message", "acompletion", { messages: [{ role: "assistant", content: "x" }] }],
    ["an empty question", "acompletion", { messages: [{ role: "user", content: "  " }] }],
    ["a prompt list", "atext_completion", { prompt: ["a", "b"] }],
    ["embeddings", "aembedding", { input: "x" }],
  ])("skips a request with %s", (_what, callType, body) => {
    expect(semanticPrompt(callType, body as Record<string, unknown>)).toBeUndefined();
  });
});
