/**
 * `POST /v1/messages/count_tokens` is passed through to Anthropic deployments (Anthropic's contract fake): the
 * upstream's `{"input_tokens": N}` comes back as it is. It runs the pipeline like a model call: the key's model
 * access, its `rpm_limit` and budget, and the input guardrails (a blocked card number never reaches the
 * upstream) apply; nothing is booked (free upstream) but the request counters count it.
 * (A model served by any other deployment: `translated.test.ts`.)
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeAnthropic, startFakeAnthropic } from "../../../../fixtures/anthropic-messages.js";
import { metricValue } from "../../../../helpers/metrics.js";
import { waitFor } from "../../../../helpers/redis.js";
import { CARD, piiPolicy, testEngine } from "../../guardrails/helpers.js";
import { keySubject } from "../../limits/subjects.js";
import {
  type ChatHarness,
  rowsRecorder,
  startChatHarness,
  VIRTUAL_KEY,
} from "../chat-completions/harness.js";

let anthropic: FakeAnthropic;
let gw: ChatHarness;
let limited: ChatHarness;
let guarded: ChatHarness;
let rpm2: ChatHarness;
let broke: ChatHarness;
const spend = rowsRecorder();

beforeAll(async () => {
  anthropic = await startFakeAnthropic({ apiKey: "sk-ant-upstream" });
  const onAnthropic = {
    upstreamUrl: anthropic.url,
    upstreamModel: "anthropic/claude-haiku-4-5",
    extraParams: "      api_key: sk-ant-upstream\n",
  };
  gw = await startChatHarness({ ...onAnthropic, spend });
  limited = await startChatHarness({ ...onAnthropic, models: ["other"] });
  guarded = await startChatHarness({ ...onAnthropic, guard: testEngine({ pii: piiPolicy() }).engine });
  rpm2 = await startChatHarness({ ...onAnthropic, subjects: [keySubject({ rpmLimit: 2 })] });
  broke = await startChatHarness({ ...onAnthropic, subjects: [keySubject({ maxBudget: 1, spend: 1 })] });
});
afterAll(async () => {
  await Promise.all([gw?.close(), limited?.close(), guarded?.close(), rpm2?.close(), broke?.close()]);
  await anthropic?.close();
});

const count = (on: ChatHarness, body: Record<string, unknown>) =>
  fetch(`${on.url}/v1/messages/count_tokens`, {
    method: "POST",
    headers: {
      "x-api-key": VIRTUAL_KEY,
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
    },
    body: JSON.stringify(body),
  });

const question = {
  model: "general",
  system: "Be brief.",
  messages: [{ role: "user", content: "How many tokens is this?" }],
};

describe("count_tokens", () => {
  it("passes the count through to the Anthropic deployment (the SDK's countTokens) and books nothing", async () => {
    const client = new Anthropic({ baseURL: gw.url, apiKey: VIRTUAL_KEY, maxRetries: 0 });
    const counted = await client.messages.countTokens({
      model: "general",
      system: "Be brief.",
      messages: [{ role: "user", content: "How many tokens is this?" }],
    });
    const sent = anthropic.requests.at(-1)!;
    expect(sent.path).toBe("/v1/messages/count_tokens");
    expect(sent.headers["x-api-key"]).toBe("sk-ant-upstream");
    expect(sent.body).toEqual({ ...question, model: "claude-haiku-4-5" });
    const expected =
      Math.ceil(JSON.stringify(question.messages).length / 4) +
      Math.ceil(JSON.stringify(question.system).length / 4);
    expect(counted).toEqual({ input_tokens: expected });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(spend.rows).toEqual([]);
  });

  it("refuses a key that may not use the model with 403 permission_error, before the upstream", async () => {
    const before = anthropic.requests.length;
    const response = await count(limited, question);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ type: "error", error: { type: "permission_error" } });
    expect(anthropic.requests.length).toBe(before);
  });

  it("answers an upstream's refusal in Anthropic's shape (max_tokens is not a count_tokens field)", async () => {
    const response = await count(gw, { ...question, max_tokens: 10 });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { type: string; error: { type: string; message: string } };
    expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(body.error.message).toContain("max_tokens");
    expect(anthropic.requests.at(-1)?.body).toHaveProperty("max_tokens", 10);
  });

  it("runs the input guardrails on the Messages texts: a blocked card number never reaches the upstream", async () => {
    const before = anthropic.requests.length;
    const response = await count(guarded, {
      ...question,
      messages: [{ role: "user", content: [{ type: "text", text: `Charge my card ${CARD}` }] }],
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(response.headers.get("x-guardrail-decisions")).toContain("pii=block:CREDIT_CARD");
    expect(anthropic.requests.length).toBe(before);
    // The same guard lets a clean request through.
    expect((await count(guarded, question)).status).toBe(200);
  });

  it("counts against the key's rpm_limit: 2 of 8 calls answered, the rest 429 before the upstream", async () => {
    const before = anthropic.requests.length;
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await count(rpm2, question)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(6);
    expect(anthropic.requests.length - before).toBe(2);
  });

  it("is refused with the model call's 429 budget error once the budget is spent", async () => {
    const before = anthropic.requests.length;
    const response = await count(broke, question);
    expect(response.status).toBe(429);
    const body = (await response.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe("error");
    expect(body.error.message).toMatch(/budget/i);
    expect(anthropic.requests.length).toBe(before);
    // The same refusal as a model call on the same key.
    const messages = await fetch(`${broke.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": VIRTUAL_KEY, "content-type": "application/json" },
      body: JSON.stringify({ ...question, max_tokens: 5 }),
    });
    expect(messages.status).toBe(429);
    expect(((await messages.json()) as typeof body).error.type).toBe(body.error.type);
  });

  it("is counted in the request counters under its own route", async () => {
    const counted = () =>
      metricValue(gw.metrics.registry, "litellm_proxy_total_requests_metric_total", {
        route: "/v1/messages/count_tokens",
      });
    const before = await counted();
    expect((await count(gw, question)).status).toBe(200);
    await waitFor("the request counted", async () => (await counted()) === before + 1);
  });
});
