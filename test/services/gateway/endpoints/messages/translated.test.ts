/**
 * `POST /v1/messages` on a deployment that serves only chat completions (the OpenAI chat fake): Anthropic's own
 * SDK (`messages.create`, streamed and not, with a tool) pointed at the gateway with a virtual key in
 * `x-api-key`, the call translated both ways and booked on the key with its cost and `anthropic_messages`; and
 * the errors in Anthropic's shape.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallResult } from "../../../../../services/gateway/src/pipeline/types.js";
import {
  type FakeUpstream,
  fakeTokenCount,
  startFakeUpstream,
} from "../../../../fixtures/openai-upstream.js";
import { keySubject } from "../../limits/subjects.js";
import {
  type ChatHarness,
  rowsRecorder,
  startChatHarness,
  VIRTUAL_KEY,
} from "../chat-completions/harness.js";

let upstream: FakeUpstream;
let h: ChatHarness;
const spend = rowsRecorder();
const results: CallResult[] = [];
let client: Anthropic;

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: {
    type: "object" as const,
    properties: { location: { type: "string" } },
    required: ["location"],
  },
};

beforeAll(async () => {
  upstream = await startFakeUpstream();
  h = await startChatHarness({
    upstreamUrl: upstream.url,
    spend,
    observers: [{ onCallFinished: (_call, result) => results.push(result) }],
  });
  client = new Anthropic({ baseURL: h.url, apiKey: VIRTUAL_KEY, maxRetries: 0 });
});
afterAll(async () => {
  await h?.close();
  await upstream?.close();
});

describe("POST /v1/messages translated to chat completions", () => {
  it("answers the SDK's messages.create with a Message and books it on the key as anthropic_messages", async () => {
    const before = spend.rows.length;
    const message = await client.messages.create({
      model: "general",
      max_tokens: 64,
      system: "Be brief.",
      messages: [{ role: "user", content: [{ type: "text", text: "hello there" }] }],
    });
    expect(message.type).toBe("message");
    expect(message.id).toMatch(/^msg_/);
    expect(message.role).toBe("assistant");
    expect(message.content).toEqual([{ type: "text", text: "You said: hello there" }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    // The upstream got chat completions: the system prompt as a system message, the cap as max_tokens.
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.body?.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "hello there" },
    ]);
    expect(sent.body?.max_tokens).toBe(64);
    await expect.poll(() => spend.rows.length).toBe(before + 1);
    const row = spend.rows.at(-1)!;
    expect(row.callType).toBe("anthropic_messages");
    const tokens = message.usage.input_tokens + message.usage.output_tokens;
    expect(row.spend).toBeCloseTo(tokens * 0.00001, 10);
  });

  it("turns a tool call into a tool_use block and a tool_result into a tool message", async () => {
    const message = await client.messages.create({
      model: "general",
      max_tokens: 64,
      tools: [weather],
      tool_choice: { type: "any" },
      messages: [{ role: "user", content: "Weather in Paris?" }],
    });
    expect(message.stop_reason).toBe("tool_use");
    const use = message.content.find((b) => b.type === "tool_use");
    expect(use).toMatchObject({
      type: "tool_use",
      id: "call_fake_1",
      name: "get_weather",
      input: { location: "Paris" },
    });
    const sentTools = upstream.requests.at(-1)!.body!;
    expect(sentTools.tools).toEqual([
      {
        type: "function",
        function: { name: "get_weather", description: weather.description, parameters: weather.input_schema },
      },
    ]);
    expect(sentTools.tool_choice).toBe("required");

    await client.messages.create({
      model: "general",
      max_tokens: 64,
      tools: [weather],
      tool_choice: { type: "none" },
      messages: [
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: message.content },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_fake_1", content: "18 °C, sunny" },
            { type: "text", text: "Thanks" },
          ],
        },
      ],
    });
    const sent = upstream.requests.at(-1)!.body!.messages as Array<Record<string, unknown>>;
    expect(sent.slice(1)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_fake_1",
            type: "function",
            function: { name: "get_weather", arguments: '{"location":"Paris"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_fake_1", content: "18 °C, sunny" },
      { role: "user", content: "Thanks" },
    ]);
  });

  it("streams Messages events the SDK assembles into the same Message, tool calls included", async () => {
    const before = spend.rows.length;
    const stream = client.messages.stream({
      model: "general",
      max_tokens: 64,
      messages: [{ role: "user", content: "stream me" }],
    });
    const types: string[] = [];
    stream.on("streamEvent", (event) => types.push(event.type));
    const message = await stream.finalMessage();
    expect(message.content).toEqual([{ type: "text", text: "You said: stream me" }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(types[0]).toBe("message_start");
    expect(types.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    expect(types).toContain("content_block_delta");
    await expect.poll(() => spend.rows.length).toBe(before + 1);
    expect(spend.rows.at(-1)!.callType).toBe("anthropic_messages");
    expect(spend.rows.at(-1)!.spend).toBeGreaterThan(0);

    const tool = await client.messages
      .stream({
        model: "general",
        max_tokens: 64,
        tools: [weather],
        messages: [{ role: "user", content: "Paris?" }],
      })
      .finalMessage();
    expect(tool.stop_reason).toBe("tool_use");
    expect(tool.content).toEqual([
      { type: "tool_use", id: "call_fake_1", name: "get_weather", input: { location: "Paris" } },
    ]);
  });

  it("counts the prompt in message_start's input_tokens, as Anthropic does (clients read it there)", async () => {
    const stream = client.messages.stream({
      model: "general",
      max_tokens: 64,
      messages: [{ role: "user", content: "count my prompt tokens please, all of them" }],
    });
    const starts: number[] = [];
    stream.on("streamEvent", (event) => {
      if (event.type === "message_start") starts.push(event.message.usage.input_tokens);
    });
    const message = await stream.finalMessage();
    expect(starts).toHaveLength(1);
    expect(starts[0]).toBeGreaterThan(0);
    // The real count, from the chat stream's usage, comes with message_delta (the SDK keeps the latest).
    expect(message.usage.input_tokens).toBe(fakeTokenCount("count my prompt tokens please, all of them"));
  });

  it("accepts the key as Authorization: Bearer too", async () => {
    const res = await fetch(`${h.url}/v1/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${VIRTUAL_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "general", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { type: string }).type).toBe("message");
  });
});

describe("POST /v1/messages errors, in Anthropic's shape", () => {
  it("refuses an unknown model with 400 invalid_request_error", async () => {
    const error = await client.messages
      .create({ model: "nope", max_tokens: 8, messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const e = error as InstanceType<typeof Anthropic.BadRequestError>;
    expect(e.status).toBe(400);
    expect(e.error).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect((e.error as { error: { message: string } }).error.message).toContain("model=nope");
  });

  it("refuses a bad key with 401 authentication_error", async () => {
    const bad = new Anthropic({ baseURL: h.url, apiKey: "sk-not-a-key", maxRetries: 0 });
    const error = await bad.messages
      .create({ model: "general", max_tokens: 8, messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((error as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({
      type: "error",
      error: { type: "authentication_error" },
    });
  });

  it("names the missing max_tokens", async () => {
    const res = await fetch(`${h.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": VIRTUAL_KEY, "content-type": "application/json" },
      body: JSON.stringify({ model: "general", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: "Invalid request: max_tokens is required." },
    });
  });

  it("refuses with 429 rate_limit_error once the key's budget is spent through /v1/chat/completions", async () => {
    const small = await startChatHarness({
      upstreamUrl: upstream.url,
      upstreamModel: "openai/gpt-4o",
      subjects: [keySubject({ maxBudget: 0.005, alias: "small" })],
    });
    try {
      // gpt-4o's tokenizer bounds the input at ~310 tokens (~$0.0031 reserved at $0.00001); the fake, which counts
      // a token per 4 characters and echoes the prompt, books ~900 tokens: the budget is spent, nothing fits.
      const spent = await small.chat({
        model: "general",
        max_tokens: 4,
        messages: [{ role: "user", content: "hello world ".repeat(150) }],
      });
      expect(spent.status).toBe(200);
      const anthropic = new Anthropic({ baseURL: small.url, apiKey: VIRTUAL_KEY, maxRetries: 0 });
      const error = await anthropic.messages
        .create({ model: "general", max_tokens: 200, messages: [{ role: "user", content: "hi" }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.RateLimitError);
      const e = error as InstanceType<typeof Anthropic.RateLimitError>;
      expect(e.error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
      expect((e.error as { error: { message: string } }).error.message).toMatch(/budget/i);
    } finally {
      await small.close();
    }
  });
});

describe("POST /v1/messages/count_tokens", () => {
  it("refuses a model not served by Anthropic clearly, in Anthropic's shape, rather than guess a count", async () => {
    const res = await fetch(`${h.url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "x-api-key": VIRTUAL_KEY, "content-type": "application/json" },
      body: JSON.stringify({ model: "general", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toMatch(/count_tokens.*Anthropic/);
  });
});
