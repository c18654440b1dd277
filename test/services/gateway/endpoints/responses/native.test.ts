/**
 * `/v1/responses` for a deployment that serves the Responses API natively (an `openai/` deployment whose
 * `model_info.supported_endpoints` lists `/v1/responses`, in front of the Responses fake): the request goes
 * upstream as the client wrote it (unknown fields too), answers and events pass through and validate against
 * OpenAI's schemas, usage is read from `usage.input_tokens` / `output_tokens` (streamed: `response.completed`),
 * and `previous_response_id` works because the upstream keeps the state.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FakeResponsesUpstream,
  startFakeResponsesUpstream,
} from "../../../../fixtures/openai-responses.js";
import { openAISchemaErrors } from "../../../../helpers/openapi.js";
import { waitFor } from "../../../../helpers/redis.js";
import { streamResponse } from "../../../../helpers/responses-stream.js";
import {
  type ChatHarness,
  rowsRecorder,
  startChatHarness,
  VIRTUAL_KEY,
} from "../chat-completions/harness.js";

let upstream: FakeResponsesUpstream;
let gw: ChatHarness;
let client: OpenAI;
const spend = rowsRecorder();
const PRICE = 0.00001;

const weather = {
  type: "function" as const,
  name: "get_weather",
  description: "Current weather for a city",
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  strict: true,
};

beforeAll(async () => {
  upstream = await startFakeResponsesUpstream();
  gw = await startChatHarness({
    upstreamUrl: upstream.url,
    spend,
    pricePerToken: PRICE,
    extraParams: '    model_info:\n      supported_endpoints: ["/v1/chat/completions", "/v1/responses"]\n',
  });
  client = new OpenAI({ apiKey: VIRTUAL_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
});

const row = async (n: number) => {
  await waitFor(`spend row ${n}`, () => spend.rows.length >= n);
  return spend.rows[n - 1]!;
};

describe("native Responses pass-through", () => {
  it("sends the request as written and books the upstream's usage", async () => {
    const before = spend.rows.length;
    const response = await client.responses.create({
      model: "general",
      input: "hello native",
      tools: [weather],
      reasoning: { effort: "low" },
      store: true,
    });
    expect(openAISchemaErrors("Response", response)).toEqual([]);
    expect(response.id).toMatch(/^resp_fake_/);
    expect(response.output[0]).toMatchObject({ type: "function_call", name: "get_weather" });
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe("/v1/responses");
    expect(sent.body).toMatchObject({
      model: "fake-model",
      input: "hello native",
      reasoning: { effort: "low" },
      store: true,
    });
    expect(sent.body).not.toHaveProperty("stream_options");
    const booked = await row(before + 1);
    expect(booked.callType).toBe("aresponses");
    expect(booked.promptTokens).toBe(response.usage?.input_tokens);
    expect(booked.completionTokens).toBe(response.usage?.output_tokens);
    expect(booked.spend).toBeCloseTo((response.usage?.total_tokens ?? 0) * PRICE, 10);
  });

  it("answers previous_response_id through the upstream, which keeps the state", async () => {
    const first = await client.responses.create({ model: "general", input: "remember me" });
    const second = await client.responses.create({
      model: "general",
      input: "and now?",
      previous_response_id: first.id,
    });
    expect(second.previous_response_id).toBe(first.id);
    expect(upstream.requests.at(-1)?.body?.previous_response_id).toBe(first.id);
  });

  it("relays a stream's events as they came and books the usage of response.completed", async () => {
    const before = spend.rows.length;
    const seen = await streamResponse(client, { model: "general", input: "stream natively" });
    for (const event of seen)
      expect(openAISchemaErrors("ResponseStreamEvent", event), event.type).toEqual([]);
    expect(seen[0]?.type).toBe("response.created");
    const completed = seen.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.type).toBe("response.completed");
    const text = seen.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : [])).join("");
    expect(text).toBe("You said: stream natively");
    expect(upstream.requests.at(-1)?.body).not.toHaveProperty("stream_options");
    const booked = await row(before + 1);
    expect(booked.callType).toBe("aresponses");
    expect(booked.completionTokens).toBe(completed.response.usage?.output_tokens);
    expect(booked.promptTokens).toBe(completed.response.usage?.input_tokens);
  });
});
