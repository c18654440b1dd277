/**
 * Deployments that ignore the output cap they are sent (issue 28, defect 6): after one answer past its cap the
 * deployment is marked on every instance (Redis key with a TTL, the invalidation bus), and from then on, as for a
 * deployment declared `model_info.ignores_output_cap: true`, JSON calls go upstream as streams the gateway cuts at
 * the reservation and assembles into the JSON answer. Two gateway instances (the chat harness on two `Limits`
 * under one Redis prefix), the contract fakes that ignore `max_tokens` (OpenAI's chat: the default fake, which
 * echoes the prompt whatever the cap; legacy completions: `ignoreMaxTokens`).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Limits } from "../../../../services/gateway/src/limits/index.js";
import { MARK_TTL_MS } from "../../../../services/gateway/src/router/cap-ignorers.js";
import { systemClock } from "../../../../services/gateway/src/time/clock.js";
import { type FakeAnthropic, startFakeAnthropic } from "../../../fixtures/anthropic-messages.js";
import {
  type FakeEmbeddingsCompletions,
  startFakeEmbeddingsCompletions,
} from "../../../fixtures/openai-embeddings-completions.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { openLimits } from "../../../helpers/limits.js";
import { openAISchemaErrors } from "../../../helpers/openapi.js";
import { deleteKeys, inspector, uniquePrefix, waitFor } from "../../../helpers/redis.js";
import {
  type ChatHarness,
  type ChatHarnessOptions,
  rowsRecorder,
  startChatHarness,
  VIRTUAL_KEY,
} from "../endpoints/chat-completions/harness.js";
import { keySubject } from "../limits/subjects.js";

const prefix = uniquePrefix("cap-ignorers");
let upstream: FakeUpstream;
let legacy: FakeEmbeddingsCompletions;
let anthropic: FakeAnthropic;
const limits: Limits[] = [];
const open: ChatHarness[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  legacy = await startFakeEmbeddingsCompletions({ ignoreMaxTokens: true, completionWords: 400 });
  anthropic = await startFakeAnthropic({ apiKey: "sk-ant-gateway" });
  // Two gateway instances: their own admitters and buses, one Redis.
  limits.push(await openLimits(systemClock, prefix), await openLimits(systemClock, prefix));
});
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
  upstream.requests.length = 0;
  legacy.requests.length = 0;
  // Each test starts with no deployment marked.
  const redis = inspector();
  try {
    await redis.del(`${prefix}cap-ignorer:ignorer`, `${prefix}cap-ignorer:instruct-1`);
  } finally {
    redis.disconnect();
  }
});
afterAll(async () => {
  for (const l of limits) await l.close();
  await deleteKeys(prefix);
  await upstream?.close();
  await legacy?.close();
  await anthropic?.close();
});

/**
 * `general` at the fake (model_info.id `ignorer`, more `model_info` lines in `info`), input cheap and output
 * dear so that the output an ignored cap lets through is what costs; `instruct` at the completions fake.
 */
const modelList = (info = "") =>
  [
    "model_list:",
    "  - model_name: general",
    "    litellm_params:",
    "      model: openai/fake-model",
    `      api_base: ${upstream.url}`,
    "      input_cost_per_token: 0.000001",
    "      output_cost_per_token: 0.001",
    "    model_info:",
    "      id: ignorer",
    info,
    "  - model_name: instruct",
    "    litellm_params:",
    "      model: openai/fake-model",
    `      api_base: ${legacy.url}`,
    "      input_cost_per_token: 0.000001",
    "      output_cost_per_token: 0.001",
    "    model_info:",
    "      id: instruct-1",
  ]
    .filter((line) => line !== "")
    .join("\n");

async function harness(options: Partial<ChatHarnessOptions>) {
  const h = await startChatHarness({ upstreamUrl: upstream.url, modelList: modelList(), ...options });
  open.push(h);
  return h;
}

/** A long prompt: the fake echoes it, ~600 output tokens whatever `max_tokens` says. */
const LONG = "hello world ".repeat(200);
const capped = { model: "general", messages: [{ role: "user", content: LONG }], max_tokens: 5 };

/** The parts of a chat completion, a text completion or a Responses `response` the tests read. */
interface Answer {
  choices: Array<{ finish_reason: string; message: { content: string } }>;
  usage: { completion_tokens: number };
  status?: string;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe("a deployment that ignores the cap it is sent", () => {
  it("is marked after one overrun on instance A, and a burst of JSON calls on instance B stays within the budget", async () => {
    const budget = 1;
    const subject = keySubject({ maxBudget: budget });
    const spend = rowsRecorder();
    const a = await harness({ limits: limits[0]!, subjects: [subject], spend });
    const b = await harness({ limits: limits[1]!, subjects: [subject], spend });

    // One overrun on A: ~600 output tokens at $0.001 for a cap of 5.
    const first = await a.chat(capped);
    expect(first.status).toBe(200);
    expect(
      ((await first.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens,
    ).toBeGreaterThan(500);
    expect(upstream.requests[0]!.body).not.toHaveProperty("stream");
    // Marked in Redis with its TTL, and instance B learns it.
    const redis = inspector();
    try {
      const ttl = await redis.pttl(`${prefix}cap-ignorer:ignorer`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(MARK_TTL_MS);
    } finally {
      redis.disconnect();
    }
    const deployment = b.router.deployments("general")![0]!;
    await waitFor("instance B knows the mark", () => b.router.capIgnorers.ignores(deployment));

    const burst = await Promise.all(Array.from({ length: 20 }, () => b.chat(capped)));
    const answers = await Promise.all(
      burst.map(async (res) => ({ status: res.status, body: (await res.json()) as Answer })),
    );
    expect(answers.filter((x) => x.status === 200).length).toBeGreaterThan(0);
    expect(sum(spend.rows.map((r) => r.spend))).toBeLessThanOrEqual(budget + 1e-9);
    for (const { status, body } of answers) {
      if (status !== 200) continue;
      expect(openAISchemaErrors("CreateChatCompletionResponse", body)).toEqual([]);
      expect(body.choices[0]!.finish_reason).toBe("length");
      expect(body.usage.completion_tokens).toBeLessThanOrEqual(5);
    }
    // An instance started after the mark reads it back from Redis (it missed the bus message).
    const late = await harness({ limits: limits[1]!, subjects: [subject] });
    // (Its read-back at start may have timed out on a loaded machine: read back again until it answers.)
    await waitFor("a later instance reads the mark", async () => {
      await late.router.capIgnorers.sync();
      return late.router.capIgnorers.ignores(deployment);
    });
    // Streamed upstream, usage asked for.
    for (const request of upstream.requests.slice(1))
      expect(request.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("declared in model_info (ignores_output_cap: true) is streamed from its first JSON call, chat, Responses and Messages alike", async () => {
    const spend = rowsRecorder();
    const h = await harness({
      modelList: modelList("      ignores_output_cap: true"),
      subjects: [keySubject({ maxBudget: 10 })],
      spend,
    });
    const res = await h.chat(capped);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Answer;
    expect(openAISchemaErrors("CreateChatCompletionResponse", body)).toEqual([]);
    expect(body.choices[0]!.finish_reason).toBe("length");
    expect(body.choices[0]!.message.content).toMatch(/^You said: /);
    expect(upstream.requests[0]!.body).toMatchObject({ stream: true, max_tokens: 5 });
    // Booked within the reservation: ≤ 5 output tokens.
    expect(spend.rows[0]!.completionTokens).toBeLessThanOrEqual(5);

    const post = (path: string, payload: object) =>
      fetch(`${h.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${VIRTUAL_KEY}`, "content-type": "application/json" },
        body: JSON.stringify(payload),
      });
    const response = await post("/v1/responses", { model: "general", input: LONG, max_output_tokens: 5 });
    expect(response.status).toBe(200);
    const responseBody = (await response.json()) as Answer;
    expect(openAISchemaErrors("Response", responseBody)).toEqual([]);
    expect(responseBody.status).toBe("incomplete");
    const message = await post("/v1/messages", {
      model: "general",
      max_tokens: 5,
      messages: [{ role: "user", content: LONG }],
    });
    expect(message.status).toBe(200);
    expect(((await message.json()) as { stop_reason: string }).stop_reason).toBe("max_tokens");
    for (const request of upstream.requests) expect(request.body).toMatchObject({ stream: true });
    for (const row of spend.rows) expect(row.completionTokens).toBeLessThanOrEqual(5);
  });

  it("declared on an anthropic/ deployment: a chat JSON call goes as a Messages stream, translated to chunks, assembled and cut", async () => {
    const h = await harness({
      modelList: undefined,
      upstreamUrl: anthropic.url,
      upstreamModel: "anthropic/claude-sonnet-4-5",
      extraParams: "      api_key: sk-ant-gateway\n    model_info:\n      ignores_output_cap: true\n",
      subjects: [keySubject({ maxBudget: 10 })],
    });
    anthropic.misbehaveNextStream({ kind: "long", words: 300 });
    const res = await h.chat({
      model: "general",
      messages: [{ role: "user", content: "talk" }],
      max_tokens: 5,
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Answer;
    expect(openAISchemaErrors("CreateChatCompletionResponse", body)).toEqual([]);
    expect(body.choices[0]!.finish_reason).toBe("length");
    expect(body.usage.completion_tokens).toBeLessThanOrEqual(5);
    expect(anthropic.requests.at(-1)!.body).toMatchObject({ stream: true, max_tokens: 5 });
    // A tool call comes back assembled from the translated chunks.
    const tool = await h.chat({
      model: "general",
      messages: [{ role: "user", content: "weather?" }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
      max_tokens: 50,
    });
    const called = (await tool.json()) as {
      choices: Array<{ finish_reason: string; message: { tool_calls: Array<{ function: object }> } }>;
    };
    expect(openAISchemaErrors("CreateChatCompletionResponse", called)).toEqual([]);
    expect(called.choices[0]!.finish_reason).toBe("tool_calls");
    expect(called.choices[0]!.message.tool_calls[0]!.function).toEqual({
      name: "get_weather",
      arguments: '{"location":"Paris"}',
    });
  });

  it("a stream that fails before it ends: the JSON client gets a 502 in OpenAI's shape and the call is booked", async () => {
    const spend = rowsRecorder();
    const h = await harness({
      modelList: undefined,
      upstreamUrl: anthropic.url,
      upstreamModel: "anthropic/claude-sonnet-4-5",
      extraParams: "      api_key: sk-ant-gateway\n    model_info:\n      ignores_output_cap: true\n",
      subjects: [keySubject({ maxBudget: 10 })],
      spend,
    });
    // The fake sends a first text delta, then an `error` event (overloaded_error).
    anthropic.failNextStreamMidway().release();
    const res = await h.chat({
      model: "general",
      messages: [{ role: "user", content: "x" }],
      max_tokens: 50,
    });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe("upstream_error");
    expect(spend.rows).toHaveLength(1);
    expect(spend.rows[0]!.status).toBe(502);
    // The upstream was used: its prompt is paid for (the delta before the error may be dropped with the failed
    // translation, so the output read can be 0).
    expect(spend.rows[0]!.promptTokens).toBeGreaterThan(0);
    expect(spend.rows[0]!.spend).toBeGreaterThan(0);
  });

  it("on the legacy completions API: a marked deployment's answer is a text_completion cut at the reservation", async () => {
    const h = await harness({ subjects: [keySubject({ maxBudget: 10 })] });
    const post = () =>
      fetch(`${h.url}/v1/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${VIRTUAL_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "instruct", prompt: "Say something", max_tokens: 5 }),
      });
    const overrun = (await (await post()).json()) as { usage: { completion_tokens: number } };
    expect(overrun.usage.completion_tokens).toBe(400);
    await waitFor("the mark", () => h.router.capIgnorers.ignores(h.router.deployments("instruct")![0]!));
    const res = await post();
    const body = (await res.json()) as Answer;
    expect(openAISchemaErrors("CreateCompletionResponse", body)).toEqual([]);
    expect(body.choices[0]!.finish_reason).toBe("length");
    expect(body.usage.completion_tokens).toBeLessThanOrEqual(5);
    expect(legacy.requests.at(-1)!.body).toMatchObject({ stream: true });
  });

  it("leaves a deployment that was never marked alone: its JSON call goes upstream as the client's body, unchanged", async () => {
    const h = await harness({ limits: limits[0]!, subjects: [keySubject({ rpmLimit: 100 })] });
    // Another deployment is marked meanwhile: marks are per deployment.
    await h.router.capIgnorers.mark(h.router.deployments("instruct")![0]!);
    const text = JSON.stringify({
      model: "general",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 50,
    });
    const res = await h.chat(text);
    expect(res.status).toBe(200);
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]!.rawBody).toBe(text.replace('"general"', '"fake-model"'));
  });
});
