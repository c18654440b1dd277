/**
 * Booked spend is the provider's bill: for each usage shape the providers send (OpenAI's cached, audio,
 * reasoning and prediction tokens; the Responses API's cached and reasoning tokens; Anthropic's cache writes
 * (5-minute and 1-hour), cache reads, web searches and its long-context tier), through every endpoint that
 * reaches it (chat completions, Responses native and translated, Messages native and translated, chat and
 * Responses translated to Anthropic), JSON and streamed, the spend row's cost equals the bill computed by hand
 * from the published prices (test/fixtures/published-prices.ts) within 0.1 %, and the row carries the usage
 * breakdown. The fakes send the usage objects as the real APIs do (test/fixtures/*).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeAnthropic, startFakeAnthropic } from "../../../fixtures/anthropic-messages.js";
import {
  type FakeResponsesUpstream,
  startFakeResponsesUpstream,
} from "../../../fixtures/openai-responses.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { PUBLISHED } from "../../../fixtures/published-prices.js";
import {
  type ChatHarness,
  rowsRecorder,
  startChatHarness,
  VIRTUAL_KEY,
} from "../endpoints/chat-completions/harness.js";

let chat: FakeUpstream;
let responses: FakeResponsesUpstream;
let anthropic: FakeAnthropic;
let h: ChatHarness;
const spend = rowsRecorder();

const { gpt4o, gpt5, sonnet45: s, sonnet45Long: sl, custom } = PUBLISHED;
const perM = (usd: number) => usd / 1e6;

beforeAll(async () => {
  [chat, responses, anthropic] = await Promise.all([
    startFakeUpstream(),
    startFakeResponsesUpstream(),
    startFakeAnthropic(),
  ]);
  const a = custom.audio;
  const r = custom.reasoner;
  const modelList = `
model_list:
  - model_name: gpt
    litellm_params: { model: openai/gpt-4o, api_base: "${chat.url}", api_key: sk-x }
  - model_name: gpt-responses
    litellm_params: { model: openai/gpt-5, api_base: "${responses.url}", api_key: sk-x }
    model_info: { supported_endpoints: [/v1/responses] }
  - model_name: claude
    litellm_params: { model: anthropic/claude-sonnet-4-5, api_base: "${anthropic.url}", api_key: sk-ant-fake }
  - model_name: claude-proxy
    litellm_params: { model: openai/claude-sonnet-4-5, api_base: "${chat.url}" }
  - model_name: audio
    litellm_params:
      model: openai/voice-model
      api_base: "${chat.url}"
      input_cost_per_token: ${perM(a.input)}
      output_cost_per_token: ${perM(a.output)}
      cache_read_input_token_cost: ${perM(a.cached)}
      input_cost_per_audio_token: ${perM(a.audioIn)}
      output_cost_per_audio_token: ${perM(a.audioOut)}
  - model_name: reasoner
    litellm_params:
      model: openai/thinker
      api_base: "${chat.url}"
      input_cost_per_token: ${perM(r.input)}
      output_cost_per_token: ${perM(r.output)}
    model_info:
      cache_read_input_token_cost: ${perM(r.cached)}
      output_cost_per_reasoning_token: ${perM(r.reasoning)}
  - model_name: reasoner-responses
    litellm_params: { model: openai/thinker, api_base: "${responses.url}" }
    model_info:
      supported_endpoints: [/v1/responses]
      input_cost_per_token: ${perM(r.input)}
      output_cost_per_token: ${perM(r.output)}
      cache_read_input_token_cost: ${perM(r.cached)}
      output_cost_per_reasoning_token: ${perM(r.reasoning)}
`;
  h = await startChatHarness({ upstreamUrl: chat.url, modelList, spend });
});
afterAll(async () => {
  await h?.close();
  await Promise.all([chat?.close(), responses?.close(), anthropic?.close()]);
});

type Api = "chat" | "responses" | "messages";
type Fake = "chat" | "responses" | "anthropic";

/** One request of `api` for `alias`, read to its end; returns the HTTP status. */
async function call(api: Api, alias: string, stream: boolean, extra: Record<string, unknown> = {}) {
  const bodies: Record<Api, Record<string, unknown>> = {
    chat: { messages: [{ role: "user", content: "hello" }], max_tokens: 64 },
    responses: { input: "hello", max_output_tokens: 64 },
    messages: { messages: [{ role: "user", content: "hello" }], max_tokens: 64 },
  };
  const path = { chat: "/v1/chat/completions", responses: "/v1/responses", messages: "/v1/messages" }[api];
  const res = await fetch(`${h.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${VIRTUAL_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: alias, stream, ...bodies[api], ...extra }),
  });
  await res.text();
  return res.status;
}

/** Makes the fake behind a case answer with `usage` next. */
function arm(fake: Fake, usage: Record<string, unknown>): void {
  (({ chat, responses, anthropic }) as const)[fake].nextUsage(usage);
}

/** OpenAI chat usage (OpenAPI `CompletionUsage`). */
const chatUsage = (
  prompt: number,
  completion: number,
  inDetails: Record<string, number> = {},
  outDetails: Record<string, number> = {},
) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0, ...inDetails },
  completion_tokens_details: {
    reasoning_tokens: 0,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
    ...outDetails,
  },
});

/** Responses usage (OpenAPI `ResponseUsage`). */
const responsesUsage = (input: number, cached: number, output: number, reasoning: number) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: cached, cache_write_tokens: 0 },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: reasoning },
  total_tokens: input + output,
});

/** Anthropic usage (Messages `usage`): `input` excludes the cache reads and writes. */
const claudeUsage = (
  input: number,
  output: number,
  cache: { read?: number; write5m?: number; write1h?: number; searches?: number } = {},
) => ({
  input_tokens: input,
  cache_creation_input_tokens: (cache.write5m ?? 0) + (cache.write1h ?? 0),
  cache_read_input_tokens: cache.read ?? 0,
  cache_creation: {
    ephemeral_5m_input_tokens: cache.write5m ?? 0,
    ephemeral_1h_input_tokens: cache.write1h ?? 0,
  },
  output_tokens: output,
  ...(cache.searches === undefined ? {} : { server_tool_use: { web_search_requests: cache.searches } }),
  service_tier: "standard",
});

interface Shape {
  name: string;
  fake: Fake;
  usage: Record<string, unknown>;
  /** The bill by hand, USD. */
  bill: number;
  /** Breakdown parts the spend row must show. */
  parts: Record<string, number>;
}

const shapes = {
  cached80: {
    name: "gpt-4o, 80 % of the prompt cached",
    fake: "chat",
    usage: chatUsage(1000, 50, { cached_tokens: 800 }),
    bill: perM(200 * gpt4o.input + 800 * gpt4o.cached + 50 * gpt4o.output),
    parts: { input: 200, cache_read: 800, output: 50 },
  },
  uncached: {
    name: "gpt-4o, nothing cached",
    fake: "chat",
    usage: chatUsage(1000, 50),
    bill: perM(1000 * gpt4o.input + 50 * gpt4o.output),
    parts: { input: 1000, cache_read: 0 },
  },
  predictions: {
    name: "gpt-4o, predicted output accepted and rejected (billed as output)",
    fake: "chat",
    usage: chatUsage(500, 120, {}, { accepted_prediction_tokens: 40, rejected_prediction_tokens: 30 }),
    bill: perM(500 * gpt4o.input + 120 * gpt4o.output),
    parts: { accepted_prediction: 40, rejected_prediction: 30, output: 120 },
  },
  reasoning: {
    name: "reasoning tokens at their own price, inside the output",
    fake: "chat",
    usage: chatUsage(1000, 300, { cached_tokens: 400 }, { reasoning_tokens: 200 }),
    bill: perM(
      600 * custom.reasoner.input +
        400 * custom.reasoner.cached +
        100 * custom.reasoner.output +
        200 * custom.reasoner.reasoning,
    ),
    parts: { output_reasoning: 200, output: 300, cache_read: 400 },
  },
  audio: {
    name: "audio in and out at their own prices",
    fake: "chat",
    usage: chatUsage(1000, 200, { audio_tokens: 600, cached_tokens: 100 }, { audio_tokens: 150 }),
    bill: perM(
      300 * custom.audio.input +
        600 * custom.audio.audioIn +
        100 * custom.audio.cached +
        50 * custom.audio.output +
        150 * custom.audio.audioOut,
    ),
    parts: { input: 900, input_audio: 600, output_audio: 150 },
  },
  responsesCached: {
    name: "gpt-5 Responses, cached input and reasoning (at the output price)",
    fake: "responses",
    usage: responsesUsage(2000, 1500, 100, 60),
    bill: perM(500 * gpt5.input + 1500 * gpt5.cached + 100 * gpt5.output),
    parts: { input: 500, cache_read: 1500, output_reasoning: 60 },
  },
  responsesReasoning: {
    name: "Responses reasoning at its own price",
    fake: "responses",
    usage: responsesUsage(1000, 0, 300, 200),
    bill: perM(1000 * custom.reasoner.input + 100 * custom.reasoner.output + 200 * custom.reasoner.reasoning),
    parts: { output_reasoning: 200 },
  },
  write5m: {
    name: "Claude, a 5-minute cache write",
    fake: "anthropic",
    usage: claudeUsage(100, 50, { write5m: 2000 }),
    bill: perM(100 * s.input + 2000 * s.write5m + 50 * s.output),
    parts: { input: 100, cache_write_5m: 2000, cache_write_1h: 0 },
  },
  write1h: {
    name: "Claude, 5-minute and 1-hour cache writes",
    fake: "anthropic",
    usage: claudeUsage(50, 20, { write5m: 1000, write1h: 2000 }),
    bill: perM(50 * s.input + 1000 * s.write5m + 2000 * s.write1h + 20 * s.output),
    parts: { cache_write_5m: 1000, cache_write_1h: 2000 },
  },
  read: {
    name: "Claude, a cache read",
    fake: "anthropic",
    usage: claudeUsage(200, 100, { read: 8000 }),
    bill: perM(200 * s.input + 8000 * s.read + 100 * s.output),
    parts: { input: 200, cache_read: 8000 },
  },
  longContext: {
    name: "Claude, over 200K input tokens: every token at the long-context tier",
    fake: "anthropic",
    usage: claudeUsage(150_000, 500, { read: 60_000, write5m: 1000 }),
    bill: perM(150_000 * sl.input + 60_000 * sl.read + 1000 * sl.write5m + 500 * sl.output),
    parts: { input: 150_000, cache_read: 60_000, cache_write_5m: 1000 },
  },
  proxiedWrites: {
    name: "Claude behind a LiteLLM proxy: cache writes in LiteLLM's chat usage, split by lifetime",
    fake: "chat",
    usage: {
      ...chatUsage(3050, 20),
      cache_creation_input_tokens: 3000,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
    },
    bill: perM(50 * s.input + 1000 * s.write5m + 2000 * s.write1h + 20 * s.output),
    parts: { input: 50, cache_write_5m: 1000, cache_write_1h: 2000 },
  },
  searches: {
    name: "Claude, web searches recorded (not priced)",
    fake: "anthropic",
    usage: claudeUsage(100, 50, { searches: 3 }),
    bill: perM(100 * s.input + 50 * s.output),
    parts: { web_search_requests: 3 },
  },
} satisfies Record<string, Shape>;

type Route = { api: Api; alias: string };
const CHAT: Route = { api: "chat", alias: "gpt" };
const cases: Array<[Shape, Route, boolean]> = [];
for (const stream of [false, true]) {
  cases.push(
    [shapes.cached80, CHAT, stream],
    [shapes.uncached, CHAT, stream],
    [shapes.predictions, CHAT, stream],
    [shapes.reasoning, { api: "chat", alias: "reasoner" }, stream],
    [shapes.audio, { api: "chat", alias: "audio" }, stream],
    [shapes.cached80, { api: "responses", alias: "gpt" }, stream],
    [shapes.cached80, { api: "messages", alias: "gpt" }, stream],
    [shapes.responsesCached, { api: "responses", alias: "gpt-responses" }, stream],
    [shapes.responsesReasoning, { api: "responses", alias: "reasoner-responses" }, stream],
    [shapes.write5m, { api: "messages", alias: "claude" }, stream],
    [shapes.write1h, { api: "messages", alias: "claude" }, stream],
    [shapes.read, { api: "messages", alias: "claude" }, stream],
    [shapes.longContext, { api: "messages", alias: "claude" }, stream],
    [shapes.write1h, { api: "chat", alias: "claude" }, stream],
    [shapes.read, { api: "responses", alias: "claude" }, stream],
    [shapes.proxiedWrites, { api: "messages", alias: "claude-proxy" }, stream],
  );
}
cases.push(
  [shapes.searches, { api: "messages", alias: "claude" }, false],
  [shapes.longContext, { api: "chat", alias: "claude" }, false],
  [shapes.proxiedWrites, { api: "chat", alias: "claude-proxy" }, true],
);

describe("booked spend is the provider's bill", () => {
  it("covers at least 30 usage shapes", () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  it.each(
    cases.map(([shape, route, stream]) => [
      `${shape.name}: ${route.api} → ${route.alias}${stream ? ", streamed" : ""}`,
      shape,
      route,
      stream,
    ]),
  )("%s", async (_title, shape, route, stream) => {
    const before = spend.rows.length;
    arm(shape.fake, shape.usage);
    expect(await call(route.api, route.alias, stream)).toBe(200);
    await expect.poll(() => spend.rows.length).toBe(before + 1);
    const row = spend.rows.at(-1)!;
    expect(Math.abs(row.spend - shape.bill) / shape.bill).toBeLessThan(0.001);
    expect(row.usageDetails).toMatchObject(shape.parts);
  });

  it("counts the breakdown in LiteLLM's token-detail metrics (cache reads; 5-minute and 1-hour writes together)", async () => {
    const value = async (name: string) => {
      const metric = await h.metrics.registry.getSingleMetric(name)?.get();
      return (metric?.values ?? [])
        .filter((v) => v.labels.requested_model === "claude")
        .reduce((sum, v) => sum + v.value, 0);
    };
    const [read, writes] = await Promise.all([
      value("litellm_input_cached_tokens_metric_total"),
      value("litellm_input_cache_creation_tokens_metric_total"),
    ]);
    arm("anthropic", shapes.read.usage);
    expect(await call("messages", "claude", true)).toBe(200);
    arm("anthropic", shapes.write1h.usage);
    expect(await call("chat", "claude", false)).toBe(200);
    await expect
      .poll(() => value("litellm_input_cached_tokens_metric_total"))
      .toBe(read + (shapes.read.parts.cache_read ?? 0));
    expect(await value("litellm_input_cache_creation_tokens_metric_total")).toBe(
      writes + shapes.write1h.parts.cache_write_5m + shapes.write1h.parts.cache_write_1h,
    );
  });

  it("passes prompt_cache_key and prompt_cache_retention on to OpenAI (chat and Responses)", async () => {
    const extra = { prompt_cache_key: "tenant-42", prompt_cache_retention: "24h" };
    // Byte for byte as the client wrote them (a re-encoding or renaming would show in the raw body).
    const unchanged = '"prompt_cache_key":"tenant-42","prompt_cache_retention":"24h"';
    expect(await call("chat", "gpt", false, extra)).toBe(200);
    expect(chat.requests.at(-1)?.body).toMatchObject(extra);
    expect(chat.requests.at(-1)?.rawBody).toContain(unchanged);
    expect(await call("responses", "gpt-responses", true, extra)).toBe(200);
    expect(responses.requests.at(-1)?.body).toMatchObject(extra);
    expect(responses.requests.at(-1)?.rawBody).toContain(unchanged);
  });
});
