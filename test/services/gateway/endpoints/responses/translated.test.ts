/**
 * `/v1/responses` for a deployment that serves only chat completions (the chat-only OpenAI-compatible fake): the
 * official `openai` SDK's `client.responses.create`, streamed and not, with a function tool, gets answers that
 * validate against OpenAI's published `Response` and `ResponseStreamEvent` schemas; each call is booked with its
 * cost and `call_type` `aresponses` and counted; `previous_response_id` gets the gateway's clear 400; a budget
 * spent through `/v1/chat/completions` refuses `/v1/responses`.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallResult } from "../../../../../services/gateway/src/pipeline/types.js";
import { type FakeUpstream, startFakeUpstream } from "../../../../fixtures/openai-upstream.js";
import { openAISchemaErrors } from "../../../../helpers/openapi.js";
import { waitFor } from "../../../../helpers/redis.js";
import { streamResponse } from "../../../../helpers/responses-stream.js";
import { keySubject } from "../../limits/subjects.js";
import {
  type ChatHarness,
  rowsRecorder,
  startChatHarness,
  VIRTUAL_KEY,
} from "../chat-completions/harness.js";

let upstream: FakeUpstream;
let gw: ChatHarness;
let client: OpenAI;
const spend = rowsRecorder();
const results: CallResult[] = [];

const weather = {
  type: "function" as const,
  name: "get_weather",
  description: "Current weather for a city",
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  strict: true,
};

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gw = await startChatHarness({
    upstreamUrl: upstream.url,
    spend,
    observers: [{ onCallFinished: (_call, result) => results.push(result) }],
  });
  client = new OpenAI({ apiKey: VIRTUAL_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
});

const lastChatBody = () => upstream.requests.at(-1)?.body as Record<string, unknown>;

/** Waits for the spend row of the `n`-th call (rows are written once the answer is sent). */
const row = async (n: number) => {
  await waitFor(`spend row ${n}`, () => spend.rows.length >= n);
  return spend.rows[n - 1]!;
};

describe("translated to chat completions, not streamed", () => {
  it("answers a text input with a response object that validates, booked as aresponses with its cost", async () => {
    const before = spend.rows.length;
    const response = await client.responses.create({
      model: "general",
      instructions: "Be brief.",
      input: "hello there",
      max_output_tokens: 50,
    });
    expect(openAISchemaErrors("Response", response)).toEqual([]);
    expect(response.id).toMatch(/^resp_/);
    expect(response.status).toBe("completed");
    expect(response.output_text).toBe("You said: hello there");
    expect(response.usage?.input_tokens).toBeGreaterThan(0);
    expect(response.usage?.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);
    const chat = lastChatBody();
    expect(upstream.requests.at(-1)?.path).toBe("/v1/chat/completions");
    expect(chat.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "hello there" },
    ]);
    expect(chat.max_completion_tokens).toBe(50);
    const booked = await row(before + 1);
    expect(booked.callType).toBe("aresponses");
    expect(booked.spend).toBeGreaterThan(0);
    expect(booked.promptTokens).toBe(response.usage?.input_tokens);
  });

  it("calls a function tool and takes its output back as the next turn", async () => {
    const first = await client.responses.create({
      model: "general",
      input: "Weather in Paris?",
      tools: [weather],
    });
    expect(openAISchemaErrors("Response", first)).toEqual([]);
    const call = first.output.find((i) => i.type === "function_call");
    expect(call).toMatchObject({
      type: "function_call",
      call_id: "call_fake_1",
      name: "get_weather",
      arguments: '{"location":"Paris"}',
    });
    expect(lastChatBody().tools).toEqual([
      {
        type: "function",
        function: {
          name: "get_weather",
          description: weather.description,
          parameters: weather.parameters,
          strict: true,
        },
      },
    ]);
    const second = await client.responses.create({
      model: "general",
      input: [
        { role: "user", content: [{ type: "input_text", text: "Weather in Paris?" }] },
        {
          type: "function_call",
          call_id: "call_fake_1",
          name: "get_weather",
          arguments: '{"location":"Paris"}',
        },
        { type: "function_call_output", call_id: "call_fake_1", output: '{"temp_c":21}' },
      ],
    });
    expect(openAISchemaErrors("Response", second)).toEqual([]);
    expect(lastChatBody().messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
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
      { role: "tool", tool_call_id: "call_fake_1", content: '{"temp_c":21}' },
    ]);
  });

  it("refuses previous_response_id with a 400 that says to send the full input", async () => {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${VIRTUAL_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "general", input: "and then?", previous_response_id: "resp_abc" }),
    });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { type: string; param: string; message: string } };
    expect(error.type).toBe("invalid_request_error");
    expect(error.param).toBe("previous_response_id");
    expect(error.message).toContain("no conversation state");
    expect(error.message).toContain("full conversation as input");
  });

  it("names the invalid field of a malformed request", async () => {
    const res = await fetch(`${gw.url}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${VIRTUAL_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "general", input: [{ role: "robot", content: "hi" }] }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe("input[0].role");
  });
});

describe("translated to chat completions, streamed", () => {
  const events = (params: Omit<OpenAI.Responses.ResponseCreateParamsStreaming, "stream">) =>
    streamResponse(client, params);

  it("streams text as Responses events that each validate, ending in response.completed with usage", async () => {
    const before = spend.rows.length;
    const seen = await events({ model: "general", input: "stream me" });
    for (const event of seen)
      expect(openAISchemaErrors("ResponseStreamEvent", event), event.type).toEqual([]);
    expect(seen.map((e) => e.sequence_number)).toEqual(seen.map((_, i) => i));
    const types = seen.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    expect(types.slice(-4)).toEqual([
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const text = seen.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : [])).join("");
    expect(text).toBe("You said: stream me");
    const completed = seen.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(openAISchemaErrors("Response", completed.response)).toEqual([]);
    expect(completed.response.output_text ?? text).toBe(text);
    expect(completed.response.usage?.output_tokens).toBeGreaterThan(0);
    const booked = await row(before + 1);
    expect(booked.callType).toBe("aresponses");
    expect(booked.spend).toBeGreaterThan(0);
    expect(booked.completionTokens).toBe(completed.response.usage?.output_tokens);
  });

  it("streams a function call's arguments", async () => {
    const seen = await events({ model: "general", input: "Weather?", tools: [weather] });
    for (const event of seen)
      expect(openAISchemaErrors("ResponseStreamEvent", event), event.type).toEqual([]);
    const args = seen
      .flatMap((e) => (e.type === "response.function_call_arguments.delta" ? [e.delta] : []))
      .join("");
    expect(args).toBe('{"location":"Paris"}');
    const done = seen.find((e) => e.type === "response.function_call_arguments.done");
    expect(done).toMatchObject({ name: "get_weather", arguments: '{"location":"Paris"}' });
    const completed = seen.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.type).toBe("response.completed");
    expect(completed.response.output[0]).toMatchObject({ type: "function_call", call_id: "call_fake_1" });
  });

  it("counts each call in litellm_proxy_total_requests_metric_total", async () => {
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    const ok = metrics
      .split("\n")
      .filter(
        (l) => l.startsWith("litellm_proxy_total_requests_metric_total{") && l.includes('status_code="200"'),
      )
      .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
    expect(ok).toBe(results.filter((r) => r.status === 200).length);
    expect(ok).toBeGreaterThanOrEqual(5);
  });
});

describe("budgets", () => {
  it("a budget spent through /v1/chat/completions refuses /v1/responses", async () => {
    // $0.0015 at $0.00001 a token: gpt-4o's tokenizer bounds the chat call's input at ~90 tokens (reserving ~100
    // with max_tokens), and the fake, which counts a token per 4 characters and echoes the prompt, books ~245.
    const small = await startChatHarness({
      upstreamUrl: upstream.url,
      upstreamModel: "openai/gpt-4o",
      subjects: [keySubject({ maxBudget: 0.0015, alias: "small" })],
    });
    try {
      const chat = await small.chat({
        model: "general",
        messages: [{ role: "user", content: "hello world ".repeat(40) }],
        max_tokens: 10,
      });
      expect(chat.status).toBe(200);
      const sdk = new OpenAI({ apiKey: VIRTUAL_KEY, baseURL: `${small.url}/v1`, maxRetries: 0 });
      const refused = await sdk.responses
        .create({ model: "general", input: "hi", max_output_tokens: 20 })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.APIError);
      expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
      expect((refused as InstanceType<typeof OpenAI.APIError>).type).toBe("budget_exceeded");
    } finally {
      await small.close();
    }
  });
});
