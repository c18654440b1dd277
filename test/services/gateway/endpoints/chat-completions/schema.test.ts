import { describe, expect, it } from "vitest";
import {
  parseChatCompletion,
  parseWithSchema,
} from "../../../../../services/gateway/src/endpoints/chat-completions/schema.js";

const ok = { model: "general", messages: [{ role: "user", content: "hi" }] };

/** Bodies on both sides of every rule of the schema, and at its edges. */
const bodies: Record<string, unknown>[] = [
  ok,
  { ...ok, model: "" },
  { ...ok, model: 5 },
  { messages: ok.messages },
  { model: "general" },
  { ...ok, messages: [] },
  { ...ok, messages: {} },
  { ...ok, messages: [null] },
  { ...ok, messages: [[]] },
  { ...ok, messages: [{ content: "x" }] },
  { ...ok, messages: [{ role: 1, content: "x" }] },
  { ...ok, messages: [{ role: "user" }] },
  { ...ok, messages: [{ role: "user", content: null }] },
  { ...ok, messages: [{ role: "user", content: [{ type: "text", text: "x" }] }] },
  { ...ok, messages: [{ role: "user", content: 7 }] },
  { ...ok, messages: [{ role: "user", content: { text: "x" } }] },
  {
    ...ok,
    messages: [
      { role: "user", content: "a", name: "n", extra: [1] },
      { role: "user", content: 1 },
    ],
  },
  { ...ok, stream: true },
  { ...ok, stream: "yes" },
  { ...ok, stream: null },
  { ...ok, stream_options: null },
  { ...ok, stream_options: { include_usage: true, other: 1 } },
  { ...ok, stream_options: { include_usage: "yes" } },
  { ...ok, stream_options: [] },
  { ...ok, stream_options: 1 },
  { ...ok, tools: [{ type: "function", function: { name: "f", parameters: {} } }] },
  { ...ok, tools: [{ type: "function" }] },
  { ...ok, tools: [{ type: "function", function: { name: 1 } }] },
  { ...ok, tools: [{ type: "function", function: null }] },
  { ...ok, tools: [{ function: { name: "f" } }] },
  { ...ok, tools: {} },
  { ...ok, tools: [] },
  { ...ok, tool_choice: "auto" },
  { ...ok, tool_choice: { type: "function", function: { name: "f" } } },
  { ...ok, tool_choice: [] },
  { ...ok, tool_choice: null },
  { ...ok, temperature: 0 },
  { ...ok, temperature: 2 },
  { ...ok, temperature: 2.01 },
  { ...ok, temperature: -0.1 },
  { ...ok, temperature: "hot" },
  { ...ok, temperature: null },
  { ...ok, max_tokens: 1 },
  { ...ok, max_tokens: 0 },
  { ...ok, max_tokens: -3 },
  { ...ok, max_tokens: 1.5 },
  { ...ok, max_tokens: 2 ** 60 },
  { ...ok, max_tokens: "16" },
  { ...ok, max_completion_tokens: 100 },
  { ...ok, max_completion_tokens: 0 },
  { ...ok, top_p: 0.5, stop: ["x"], response_format: { type: "json_object" }, user: "u", seed: 1 },
];

/** What parsing gives: the data, or the 400's status, message and param. */
function outcome(parse: () => unknown): unknown {
  try {
    return { data: parse() };
  } catch (error) {
    const e = error as { status: number; message: string; param: unknown };
    return { status: e.status, message: e.message, param: e.param };
  }
}

describe("parseChatCompletion", () => {
  it("accepts and refuses exactly what the zod schema does, with the same 400 message and param", () => {
    for (const body of bodies) {
      expect(
        outcome(() => parseChatCompletion(body)),
        JSON.stringify(body),
      ).toEqual(outcome(() => parseWithSchema(body)));
    }
  });

  it("refuses a body that is not an object", () => {
    for (const body of [null, [], "x", 3]) {
      expect(outcome(() => parseChatCompletion(body))).toMatchObject({ status: 400, param: null });
    }
  });

  it("copies the messages, so rewriting one leaves the client's body as it came", () => {
    const body = structuredClone(ok);
    const parsed = parseChatCompletion(body);
    (parsed.messages[0] as { content: string }).content = "masked";
    parsed.messages.push({ role: "user", content: "added" });
    expect(body).toEqual(ok);
  });
});
