/**
 * What each endpoint stores (its `cacheable` rule): whole answers only, never an answer cut by a cap, filtered or
 * refused; and the chat replay's chunks carry tool calls with their index.
 */
import { describe, expect, it } from "vitest";
import {
  chatReplayFrames,
  wholeChatCompletion,
} from "../../../../services/gateway/src/endpoints/chat-completions/cache.js";
import { wholeTextCompletion } from "../../../../services/gateway/src/endpoints/completions/cache.js";
import { wholeMessage } from "../../../../services/gateway/src/endpoints/messages/cache.js";
import { wholeResponse } from "../../../../services/gateway/src/endpoints/responses/cache.js";

const chat = (finish: string, message: Record<string, unknown> = { role: "assistant", content: "hi" }) => ({
  object: "chat.completion",
  choices: [{ index: 0, message, finish_reason: finish }],
});

describe("chat completions", () => {
  it("stores answers the model ended, not cut, filtered or refused ones", () => {
    expect(wholeChatCompletion(chat("stop"))).toBe(true);
    expect(wholeChatCompletion(chat("tool_calls"))).toBe(true);
    expect(wholeChatCompletion(chat("length"))).toBe(false);
    expect(wholeChatCompletion(chat("content_filter"))).toBe(false);
    expect(wholeChatCompletion(chat("stop", { role: "assistant", content: null, refusal: "I can't" }))).toBe(
      false,
    );
    expect(wholeChatCompletion({ object: "chat.completion", choices: [] })).toBe(false);
  });

  it("replays tool calls with their index, then the finish reason", () => {
    const call = { id: "call_1", type: "function", function: { name: "f", arguments: "{}" } };
    const frames = chatReplayFrames(
      chat("tool_calls", { role: "assistant", content: null, tool_calls: [call] }),
      false,
    );
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.slice("data: ".length)));
    expect(chunks[0].choices[0].delta.tool_calls).toEqual([{ index: 0, ...call }]);
    expect(chunks[1].choices[0].finish_reason).toBe("tool_calls");
    expect(frames.at(-1)).toBe("data: [DONE]\n\n");
  });
});

describe("the other endpoints", () => {
  it("text completions: stop only", () => {
    expect(wholeTextCompletion({ choices: [{ text: "x", finish_reason: "stop" }] })).toBe(true);
    expect(wholeTextCompletion({ choices: [{ text: "x", finish_reason: "length" }] })).toBe(false);
  });

  it("Messages: end_turn, tool_use and stop_sequence; never max_tokens or refusal", () => {
    for (const reason of ["end_turn", "tool_use", "stop_sequence"])
      expect(wholeMessage({ type: "message", stop_reason: reason })).toBe(true);
    for (const reason of ["max_tokens", "refusal", "pause_turn"])
      expect(wholeMessage({ type: "message", stop_reason: reason })).toBe(false);
  });

  it("Responses: completed without a refusal part", () => {
    const message = (part: Record<string, unknown>) => ({ type: "message", content: [part] });
    expect(
      wholeResponse({ status: "completed", output: [message({ type: "output_text", text: "x" })] }),
    ).toBe(true);
    expect(
      wholeResponse({ status: "incomplete", output: [message({ type: "output_text", text: "x" })] }),
    ).toBe(false);
    expect(
      wholeResponse({ status: "completed", output: [message({ type: "refusal", refusal: "no" })] }),
    ).toBe(false);
  });
});
