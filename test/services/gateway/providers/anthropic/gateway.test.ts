/**
 * An `anthropic/<model>` deployment through the gateway, called with OpenAI's SDK: the gateway speaks
 * Anthropic's native Messages API upstream (the contract fake) and answers in chat completions' shapes, books
 * usage and cost, maps Anthropic's rate-limit headers into the metrics, and maps Anthropic's 429/529 failures
 * to OpenAI's error shape after retrying.
 */
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeAnthropic, startFakeAnthropic } from "../../../../fixtures/anthropic-messages.js";
import { openAISchemaErrors } from "../../../../helpers/openapi.js";
import {
  type ChatHarness,
  rowsRecorder,
  startChatHarness,
  VIRTUAL_KEY,
} from "../../endpoints/chat-completions/harness.js";

const PRICE = 0.00001;
let fake: FakeAnthropic;
let gateway: ChatHarness;
let client: OpenAI;
const spend = rowsRecorder();

beforeAll(async () => {
  fake = await startFakeAnthropic({ apiKey: "sk-ant-gateway" });
  gateway = await startChatHarness({
    upstreamUrl: fake.url,
    upstreamModel: "anthropic/claude-sonnet-4-5",
    extraParams: "      api_key: sk-ant-gateway\n",
    pricePerToken: PRICE,
    spend,
  });
  client = new OpenAI({ apiKey: VIRTUAL_KEY, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});
afterEach(() => {
  spend.rows.length = 0;
});

const weatherParameters = { type: "object", properties: { location: { type: "string" } } };
const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: "function",
    function: { name: "get_weather", description: "Weather for a city", parameters: weatherParameters },
  },
];

describe("anthropic/ deployments through the gateway", () => {
  it("answers a chat completion from Anthropic's Messages API, with usage and cost booked", async () => {
    const { data, response } = await client.chat.completions
      .create({
        model: "general",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "hello gateway" },
        ],
      })
      .withResponse();
    expect(openAISchemaErrors("CreateChatCompletionResponse", data)).toEqual([]);
    expect(data.object).toBe("chat.completion");
    expect(data.choices[0]?.message.content).toBe("You said: hello gateway");
    expect(data.choices[0]?.finish_reason).toBe("stop");
    const upstream = fake.requests.at(-1);
    expect(upstream?.path).toBe("/v1/messages");
    expect(upstream?.headers["x-api-key"]).toBe("sk-ant-gateway");
    expect(upstream?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(upstream?.headers.authorization).toBeUndefined();
    expect(upstream?.body).toMatchObject({
      model: "claude-sonnet-4-5",
      system: [{ type: "text", text: "Be brief." }],
      max_tokens: 4096,
    });
    const usage = data.usage;
    expect(usage?.completion_tokens).toBe(4);
    expect(usage?.total_tokens).toBe((usage?.prompt_tokens ?? 0) + 4);
    const cost = Number(response.headers.get("x-litellm-response-cost"));
    expect(cost).toBeCloseTo((usage?.total_tokens ?? 0) * PRICE, 12);
    expect(spend.rows).toHaveLength(1);
    expect(spend.rows[0]).toMatchObject({
      model: "anthropic/claude-sonnet-4-5",
      promptTokens: usage?.prompt_tokens,
      completionTokens: 4,
    });
    expect(spend.rows[0]?.spend).toBeCloseTo(cost, 12);
  });

  it("calls a tool and takes its result back (tool_use ↔ tool_calls, tool messages → tool_result)", async () => {
    const first = await client.chat.completions.create({
      model: "general",
      tools,
      tool_choice: "auto",
      messages: [{ role: "user", content: "weather in Paris?" }],
    });
    expect(openAISchemaErrors("CreateChatCompletionResponse", first)).toEqual([]);
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    expect(call).toMatchObject({ type: "function", function: { name: "get_weather" } });
    expect(JSON.parse((call as { function: { arguments: string } }).function.arguments)).toEqual({
      location: "Paris",
    });
    const second = await client.chat.completions.create({
      model: "general",
      tools,
      messages: [
        { role: "user", content: "weather in Paris?" },
        first.choices[0]?.message as OpenAI.Chat.Completions.ChatCompletionMessageParam,
        { role: "tool", tool_call_id: call?.id ?? "", content: "sunny" },
      ],
    });
    expect(second.choices[0]?.message.content).toBe("You said: tool said sunny");
    expect(fake.requests.at(-1)?.body?.tools).toEqual([
      { name: "get_weather", description: "Weather for a city", input_schema: weatherParameters },
    ]);
  });

  it("streams valid chunks with a tool call, ends with usage and [DONE], and books the stream", async () => {
    const stream = await client.chat.completions.create({
      model: "general",
      stream: true,
      stream_options: { include_usage: true },
      tools,
      messages: [{ role: "user", content: "weather?" }],
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    for (const chunk of chunks)
      expect(openAISchemaErrors("CreateChatCompletionStreamResponse", chunk)).toEqual([]);
    const args = chunks
      .flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
      .map((t) => t.function?.arguments ?? "")
      .join("");
    expect(JSON.parse(args)).toEqual({ location: "Paris" });
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe("tool_calls");
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage?.completion_tokens).toBe(8);
    await expect.poll(() => spend.rows.length).toBe(1);
    expect(spend.rows[0]).toMatchObject({ completionTokens: 8, promptTokens: last?.usage?.prompt_tokens });
  });

  it("streams text without a usage chunk when the client did not ask for one", async () => {
    const res = await gateway.chat({
      model: "general",
      stream: true,
      messages: [{ role: "user", content: "a b" }],
    });
    const text = await res.text();
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(text).not.toContain('"usage"');
    const content = text
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => JSON.parse(e.slice(6)).choices[0]?.delta?.content ?? "")
      .join("");
    expect(content).toBe("You said: a b");
  });

  it("puts Anthropic's remaining rate limits into litellm_remaining_requests/tokens_metric", async () => {
    fake.remaining.requests = 321;
    fake.remaining.tokens = 45_678;
    await client.chat.completions.create({ model: "general", messages: [{ role: "user", content: "x" }] });
    const text = await gateway.metrics.registry.metrics();
    expect(text).toMatch(/litellm_remaining_requests_metric\{[^}]*api_provider="anthropic"[^}]*\} 321/);
    expect(text).toMatch(/litellm_remaining_tokens_metric\{[^}]*\} 45678/);
  });

  it("retries an Anthropic 529 overload and a 429, then answers", async () => {
    fake.failNext(1, 529, "overloaded_error");
    fake.failNext(1, 429, "rate_limit_error", 0);
    const before = fake.requests.length;
    const data = await client.chat.completions.create({
      model: "general",
      messages: [{ role: "user", content: "ok" }],
    });
    expect(data.choices[0]?.message.content).toBe("You said: ok");
    expect(fake.requests.length - before).toBe(3);
  });

  it("maps Anthropic's 429 to OpenAI's rate-limit error with its retry-after, and 529 to a 502 naming the overload", async () => {
    fake.failNext(3, 429, "rate_limit_error", 1);
    const limited = await client.chat.completions
      .create({ model: "general", messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    const rateError = limited as InstanceType<typeof OpenAI.RateLimitError>;
    expect(rateError.headers?.get("retry-after")).toBe("1");
    expect(openAISchemaErrors("ErrorResponse", { error: rateError.error })).toEqual([]);
    expect(rateError.message).toContain("rate_limit_error");
    fake.failNext(3, 529, "overloaded_error");
    const overloaded = await client.chat.completions
      .create({ model: "general", messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(OpenAI.APIError);
    const apiError = overloaded as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(502);
    expect(apiError.message).toContain("Overloaded (overloaded_error)");
    expect((apiError.error as { type?: string }).type).toBe("upstream_error");
  });

  it("ends a stream that Anthropic fails mid-way with an error event, not [DONE]", async () => {
    const failure = fake.failNextStreamMidway();
    const res = await gateway.chat({
      model: "general",
      stream: true,
      messages: [{ role: "user", content: "x" }],
    });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes("Partial")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    failure.release();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(text).toContain('"role":"assistant"');
    expect(text).toContain('"type":"upstream_error"');
    expect(text).not.toContain("[DONE]");
    await expect.poll(() => spend.rows.length).toBe(1);
  });

  it("refuses content Anthropic cannot take with a 400 before calling it", async () => {
    const before = fake.requests.length;
    const refused = await client.chat.completions
      .create({
        model: "general",
        messages: [
          { role: "user", content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] },
        ],
      })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as Error).message).toContain("input_audio");
    expect(fake.requests.length).toBe(before);
  });
});
