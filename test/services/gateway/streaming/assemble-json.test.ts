/**
 * A streamed answer assembled into the JSON answer the client asked for (`streaming/assemble-json.ts`): chat
 * completions (text, tool calls, `n` > 1, refusals, logprobs) and legacy completions, each validated against
 * OpenAI's published schema, and cut at the meter's limit with `finish_reason: "length"`.
 */
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../../../services/gateway/src/errors/gateway-error.js";
import { assembleJson } from "../../../../services/gateway/src/streaming/assemble-json.js";
import { OutputMeter } from "../../../../services/gateway/src/streaming/output-meter.js";
import { openAISchemaErrors } from "../../../helpers/openapi.js";

/** `events` as server-sent events, split into pieces of 7 bytes (events straddle pieces). */
async function* sse(events: Array<object | string>): AsyncIterable<Buffer> {
  const text = events.map((e) => `data: ${typeof e === "string" ? e : JSON.stringify(e)}\n\n`).join("");
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += 7) yield bytes.subarray(i, i + 7);
}

const head = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1_700_000_000, model: "m" };
const chunk = (choices: object[], extra: object = {}) => ({ ...head, choices, ...extra });
const delta = (index: number, d: object, finish: string | null = null) => ({
  index,
  delta: d,
  finish_reason: finish,
  logprobs: null,
});
const usage = { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 };

/** A meter that never cuts (estimate tokenizer). */
const roomy = () => new OutputMeter(1_000_000, undefined);

describe("assembleJson", () => {
  it("assembles a chat answer with n = 2 choices and the usage chunk into a valid chat.completion", async () => {
    const { answer, cut } = await assembleJson(
      sse([
        chunk([delta(0, { role: "assistant", content: "" }), delta(1, { role: "assistant", content: "" })]),
        chunk([delta(0, { content: "Hello " })]),
        chunk([delta(1, { content: "Bonjour " })]),
        chunk([delta(0, { content: "world" })]),
        chunk([delta(1, { content: "le monde" }, "stop")]),
        chunk([delta(0, {}, "stop")], { system_fingerprint: "fp_1" }),
        chunk([], { usage }),
        "[DONE]",
      ]),
      roomy(),
      3,
      2,
    );
    expect(cut).toBe(false);
    expect(openAISchemaErrors("CreateChatCompletionResponse", answer)).toEqual([]);
    expect(answer).toMatchObject({
      id: "chatcmpl-1",
      object: "chat.completion",
      model: "m",
      system_fingerprint: "fp_1",
      usage,
      choices: [
        { index: 0, message: { role: "assistant", content: "Hello world" }, finish_reason: "stop" },
        { index: 1, message: { role: "assistant", content: "Bonjour le monde" }, finish_reason: "stop" },
      ],
    });
  });

  it("assembles two parallel tool calls streamed in pieces (content null, arguments joined)", async () => {
    const { answer } = await assembleJson(
      sse([
        chunk([delta(0, { role: "assistant", content: null })]),
        chunk([
          delta(0, {
            tool_calls: [
              { index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } },
            ],
          }),
        ]),
        chunk([delta(0, { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] })]),
        chunk([
          delta(0, {
            tool_calls: [
              { index: 1, id: "call_b", type: "function", function: { name: "get_time", arguments: "{}" } },
            ],
          }),
        ]),
        chunk([delta(0, { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] })]),
        chunk([delta(0, {}, "tool_calls")]),
        chunk([], { usage }),
        "[DONE]",
      ]),
      roomy(),
      3,
      1,
    );
    expect(openAISchemaErrors("CreateChatCompletionResponse", answer)).toEqual([]);
    const choice = (answer.choices as Array<Record<string, unknown>>)[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message).toEqual({
      role: "assistant",
      content: null,
      refusal: null,
      tool_calls: [
        { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        { id: "call_b", type: "function", function: { name: "get_time", arguments: "{}" } },
      ],
    });
  });

  it("joins logprobs and keeps a refusal", async () => {
    const lp = (token: string) => ({ token, logprob: -0.1, bytes: null, top_logprobs: [] });
    const { answer } = await assembleJson(
      sse([
        chunk([
          {
            ...delta(0, { role: "assistant", refusal: "I can" }),
            logprobs: { content: null, refusal: [lp("I can")] },
          },
        ]),
        chunk([
          { ...delta(0, { refusal: "not." }, "stop"), logprobs: { content: null, refusal: [lp("not.")] } },
        ]),
        "[DONE]",
      ]),
      roomy(),
      3,
      1,
    );
    expect(openAISchemaErrors("CreateChatCompletionResponse", answer)).toEqual([]);
    const choice = (answer.choices as Array<Record<string, unknown>>)[0]!;
    expect(choice.message).toMatchObject({ content: null, refusal: "I cannot." });
    expect((choice.logprobs as { refusal: unknown[] }).refusal).toHaveLength(2);
  });

  it("cuts at the meter's limit: finish_reason length on every choice (begun or not), usage from the count", async () => {
    const words = Array.from({ length: 50 }, (_, i) => chunk([delta(0, { content: `word${i} ` })]));
    const body = sse([
      chunk([delta(0, { role: "assistant", content: "" })]),
      ...words,
      chunk([], { usage }),
      "[DONE]",
    ]);
    // The estimate counts one token per chunk with text at least: 10 chunks fit.
    const meter = new OutputMeter(10, undefined);
    const { answer, cut } = await assembleJson(body, meter, 7, 2);
    expect(cut).toBe(true);
    expect(openAISchemaErrors("CreateChatCompletionResponse", answer)).toEqual([]);
    const choices = answer.choices as Array<{ finish_reason: string; message: { content: string } }>;
    expect(choices.map((c) => c.finish_reason)).toEqual(["length", "length"]);
    const whole = Array.from({ length: 50 }, (_, i) => `word${i} `).join("");
    expect(choices[0]!.message.content.length).toBeGreaterThan(0);
    expect(whole.startsWith(choices[0]!.message.content)).toBe(true);
    expect(choices[0]!.message.content.length).toBeLessThan(whole.length);
    expect(choices[1]!.message.content).toBe("");
    expect(answer.usage).toEqual({
      prompt_tokens: 7,
      completion_tokens: meter.tokens,
      total_tokens: 7 + meter.tokens,
    });
    expect(meter.tokens).toBeLessThanOrEqual(10);
  });

  it("answers a stream cut at its first chunk with an empty choice (finish_reason length), not a 502", async () => {
    // A server that ignores the cap writes more in its first chunk than the call may take.
    const body = sse([
      chunk([delta(0, { role: "assistant", content: "far too many words at once" })]),
      "[DONE]",
    ]);
    const { answer, cut } = await assembleJson(body, new OutputMeter(1, undefined), 3, 1);
    expect(cut).toBe(true);
    expect(openAISchemaErrors("CreateChatCompletionResponse", answer)).toEqual([]);
    expect(answer.id).toBe(head.id);
    const choices = answer.choices as Array<{ finish_reason: string; message: { content: string } }>;
    expect(choices.map((c) => [c.finish_reason, c.message.content])).toEqual([["length", ""]]);
  });

  it("takes top-ups past the meter's limit while they are granted, then cuts", async () => {
    const words = Array.from({ length: 30 }, (_, i) => chunk([delta(0, { content: `word${i} ` })]));
    const grants: number[] = [];
    // Two grants of 10 tokens, then none.
    const topUp = async () => {
      const granted = grants.length < 2 ? 10 : 0;
      grants.push(granted);
      return granted;
    };
    const meter = new OutputMeter(10, undefined);
    const { answer, cut } = await assembleJson(sse([...words, "[DONE]"]), meter, 3, 1, topUp);
    expect(cut).toBe(true);
    expect(grants).toEqual([10, 10, 0]);
    expect(meter.tokens).toBeGreaterThan(20);
    expect(meter.tokens).toBeLessThanOrEqual(30);
    const choices = answer.choices as Array<{ finish_reason: string; message: { content: string } }>;
    expect(choices[0]!.finish_reason).toBe("length");
    // The parked chunks were replayed in order: the text is a prefix of the whole.
    const whole = Array.from({ length: 30 }, (_, i) => `word${i} `).join("");
    expect(whole.startsWith(choices[0]!.message.content)).toBe(true);
    // More than the first 10 tokens' worth, less than the whole.
    const taken = choices[0]!.message.content.split(" ").length - 1;
    expect(taken).toBeGreaterThan(5);
    expect(taken).toBeLessThan(30);
  });

  it("finishes whole when a top-up covers the rest", async () => {
    const words = Array.from({ length: 15 }, (_, i) =>
      chunk([delta(0, { content: `w${i} ` }, i === 14 ? "stop" : null)]),
    );
    const { answer, cut } = await assembleJson(
      sse([...words, "[DONE]"]),
      new OutputMeter(10, undefined),
      3,
      1,
      async () => 100,
    );
    expect(cut).toBe(false);
    const choices = answer.choices as Array<{ finish_reason: string; message: { content: string } }>;
    expect(choices[0]!.finish_reason).toBe("stop");
    expect(choices[0]!.message.content.split(" ").length - 1).toBe(15);
  });

  it("assembles a legacy completions stream into a valid text_completion", async () => {
    const text = (t: string, finish: string | null = null) => ({
      id: "cmpl-1",
      object: "text_completion",
      created: 1_700_000_000,
      model: "instruct",
      choices: [{ index: 0, text: t, logprobs: null, finish_reason: finish }],
    });
    const { answer } = await assembleJson(
      sse([
        text("Once "),
        text("upon "),
        text("a time", "stop"),
        { ...text(""), choices: [], usage },
        "[DONE]",
      ]),
      roomy(),
      3,
      1,
    );
    expect(openAISchemaErrors("CreateCompletionResponse", answer)).toEqual([]);
    expect(answer).toMatchObject({
      object: "text_completion",
      choices: [{ index: 0, text: "Once upon a time", finish_reason: "stop" }],
      usage,
    });
  });

  it("counts the output itself when the stream has no usage chunk", async () => {
    const meter = roomy();
    const { answer } = await assembleJson(
      sse([chunk([delta(0, { role: "assistant", content: "a b c d" }, "stop")]), "[DONE]"]),
      meter,
      4,
      1,
    );
    expect(meter.tokens).toBeGreaterThan(0);
    expect(answer.usage).toEqual({
      prompt_tokens: 4,
      completion_tokens: meter.tokens,
      total_tokens: 4 + meter.tokens,
    });
  });

  it("refuses a stream that carried an error event, or no chunk at all, with a 502", async () => {
    const failed = assembleJson(
      sse([chunk([delta(0, { content: "a" })]), { error: { message: "overloaded", type: "server_error" } }]),
      roomy(),
      1,
      1,
    );
    await expect(failed).rejects.toBeInstanceOf(GatewayError);
    await expect(failed).rejects.toMatchObject({ status: 502 });
    await expect(assembleJson(sse(["[DONE]"]), roomy(), 1, 1)).rejects.toMatchObject({ status: 502 });
  });
});
