/**
 * The admit step's reservation holds a budget on every path that used to leak: fallbacks to a model the key may
 * not use are skipped (never served), fallbacks it may use are priced into the reservation, `n` choices are
 * reserved, and output caps are added upstream only where a budget needs one (`x-gateway-output-cap`).
 * Through the chat harness (buildApp, the in-process admitter, the fake OpenAI upstream that honours `n`).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_MAX_OUTPUT_TOKENS } from "../../../../services/gateway/src/cost/reservation.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { deployment } from "../../../helpers/gateway.js";
import {
  type ChatHarness,
  type ChatHarnessOptions,
  rowsRecorder,
  startChatHarness,
} from "../endpoints/chat-completions/harness.js";
import { keySubject } from "../limits/subjects.js";

let cheap: FakeUpstream;
let pricey: FakeUpstream;
const open: ChatHarness[] = [];

beforeAll(async () => {
  cheap = await startFakeUpstream();
  pricey = await startFakeUpstream();
});
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
  cheap.requests.length = 0;
  pricey.requests.length = 0;
});
afterAll(async () => {
  await cheap.close();
  await pricey.close();
});

/** A closed port: `general`'s deployment there is down (connection refused), so the router falls back. */
const DEAD_URL = "http://127.0.0.1:9/v1";

/** `pricey` at `price` USD a token, the fallback of `general`. */
const fallbackConfig = (price: number) =>
  `${deployment("pricey", pricey.url, `      input_cost_per_token: ${price}\n      output_cost_per_token: ${price}\n`)}\nlitellm_settings:\n  num_retries: 0\n  fallbacks: [{general: [pricey]}]\n`;

async function harness(options: Partial<ChatHarnessOptions> & { upstreamUrl: string }) {
  const h = await startChatHarness(options);
  open.push(h);
  return h;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe("fallbacks", () => {
  it("never serves a fallback the key may not use: it is skipped, and its upstream sees nothing", async () => {
    const h = await harness({
      upstreamUrl: DEAD_URL,
      pricePerToken: 1e-6,
      moreConfig: fallbackConfig(1e-2),
      models: ["general"],
      subjects: [keySubject({ maxBudget: 1 })],
    });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        h.chat({ model: "general", messages: [{ role: "user", content: "hi" }], max_tokens: 50 }),
      ),
    );
    for (const res of answers) expect(res.status).toBeGreaterThanOrEqual(500);
    expect(pricey.requests.length).toBe(0);
    // The key still gets its 403 for the fallback alias named directly.
    const direct = await h.chat({ model: "pricey", messages: [{ role: "user", content: "hi" }] });
    expect(direct.status).toBe(403);
  });

  it("prices the reservation at the fallback's price: concurrent calls never book more than the budget", async () => {
    const spend = rowsRecorder();
    const h = await harness({
      upstreamUrl: DEAD_URL,
      pricePerToken: 1e-6,
      moreConfig: fallbackConfig(1e-2),
      subjects: [keySubject({ maxBudget: 1 })],
      spend,
    });
    const answers = await Promise.all(
      Array.from({ length: 30 }, () =>
        h.chat({ model: "general", messages: [{ role: "user", content: "hi" }], max_tokens: 50 }),
      ),
    );
    const served = answers.filter((r) => r.status === 200).length;
    expect(served).toBeGreaterThan(0);
    expect(answers.filter((r) => r.status === 429).length).toBeGreaterThan(0);
    expect(pricey.requests.length).toBe(served);
    expect(sum(spend.rows.map((r) => r.spend))).toBeLessThanOrEqual(1);
  });
});

describe("n choices", () => {
  it("reserves every choice: n: 20 on a $2 budget never books more than $2", async () => {
    const spend = rowsRecorder();
    const h = await harness({
      upstreamUrl: cheap.url,
      pricePerToken: 1e-3,
      subjects: [keySubject({ maxBudget: 2 })],
      spend,
    });
    // Each choice echoes ~40 tokens (within max_tokens), 20 of them: ~$0.85 a call.
    const body = {
      model: "general",
      messages: [{ role: "user", content: "hello world ".repeat(13) }],
      max_tokens: 50,
      n: 20,
    };
    const answers = await Promise.all(Array.from({ length: 10 }, () => h.chat(body)));
    const ok = answers.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThan(0);
    const first = (await ok[0]!.json()) as { choices: unknown[]; usage: { completion_tokens: number } };
    expect(first.choices).toHaveLength(20);
    expect(first.usage.completion_tokens).toBeGreaterThan(20 * 30);
    expect(sum(spend.rows.map((r) => r.spend))).toBeLessThanOrEqual(2);
  });

  it("refuses an n outside OpenAI's 1 to 128 with a 400 naming it", async () => {
    const h = await harness({ upstreamUrl: cheap.url });
    for (const n of [0, 129, 1.5, "2"]) {
      const res = await h.chat({ model: "general", messages: [{ role: "user", content: "hi" }], n });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { param: string } }).error.param).toBe("n");
    }
    expect(cheap.requests.length).toBe(0);
  });
});

describe("output caps", () => {
  const ask = { model: "general", messages: [{ role: "user", content: "hi" }] };

  it("adds nothing when no budget is in force: the body goes upstream as sent", async () => {
    const h = await harness({ upstreamUrl: cheap.url, subjects: [keySubject({ rpmLimit: 100 })] });
    const res = await h.chat(ask);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gateway-output-cap")).toBeNull();
    expect(cheap.requests[0]?.body).not.toHaveProperty("max_completion_tokens");
  });

  it("with a budget and a model whose maximum nobody described, sends the documented default cap and says so", async () => {
    const h = await harness({ upstreamUrl: cheap.url, subjects: [keySubject({ maxBudget: 10 })] });
    const res = await h.chat(ask);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gateway-output-cap")).toBe(`${DEFAULT_MAX_OUTPUT_TOKENS}; reason=default`);
    expect(cheap.requests[0]?.body).toMatchObject({ max_completion_tokens: DEFAULT_MAX_OUTPUT_TOKENS });
  });

  it("with model_info.max_output_tokens and a budget that pays for it, adds no cap", async () => {
    const h = await harness({
      upstreamUrl: cheap.url,
      extraParams: "    model_info:\n      max_output_tokens: 16384\n",
      subjects: [keySubject({ maxBudget: 10 })],
    });
    const res = await h.chat(ask);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gateway-output-cap")).toBeNull();
    expect(cheap.requests[0]?.rawBody).toBe(JSON.stringify({ ...ask, model: "fake-model" }));
  });

  it("caps at what the budget can pay for, instead of refusing, and says so; the client's own cap is never raised", async () => {
    // $0.01 at $0.00001 a token: 16,384 output tokens do not fit, ~990 do.
    const h = await harness({
      upstreamUrl: cheap.url,
      extraParams: "    model_info:\n      max_output_tokens: 16384\n",
      subjects: [keySubject({ maxBudget: 0.01 })],
    });
    const res = await h.chat(ask);
    expect(res.status).toBe(200);
    const header = res.headers.get("x-gateway-output-cap") ?? "";
    expect(header).toMatch(/^\d+; reason=budget$/);
    const cap = Number.parseInt(header, 10);
    expect(cap).toBeGreaterThan(900);
    expect(cap).toBeLessThan(1000);
    expect(cheap.requests[0]?.body).toMatchObject({ max_completion_tokens: cap });
    // A client that set its own cap beyond what the budget pays for is refused, not silently cut.
    const own = await h.chat({ ...ask, max_tokens: 5000 });
    expect(own.status).toBe(429);
    expect(cheap.requests.length).toBe(1);
  });

  it("caps a /v1/responses call without max_output_tokens when a budget is in force", async () => {
    const h = await harness({ upstreamUrl: cheap.url, subjects: [keySubject({ maxBudget: 10 })] });
    const res = await fetch(`${h.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: "Bearer sk-virtual-chat-harness", "content-type": "application/json" },
      body: JSON.stringify({ model: "general", input: "hi" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gateway-output-cap")).toBe(`${DEFAULT_MAX_OUTPUT_TOKENS}; reason=default`);
    expect(cheap.requests[0]?.body).toMatchObject({ max_completion_tokens: DEFAULT_MAX_OUTPUT_TOKENS });
  });
});

describe("a deployment that ignores the cap it is sent", () => {
  it("books the answer at its true cost, counts it in gateway_output_cap_overruns_total and logs it", async () => {
    const spend = rowsRecorder();
    // The default fake ignores max_tokens on JSON answers: it echoes the whole prompt.
    const h = await harness({ upstreamUrl: cheap.url, subjects: [keySubject({ maxBudget: 10 })], spend });
    const res = await h.chat({
      model: "general",
      messages: [{ role: "user", content: "hello world ".repeat(20) }],
      max_tokens: 2,
    });
    expect(res.status).toBe(200);
    const usage = ((await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } })
      .usage;
    expect(usage.completion_tokens).toBeGreaterThan(2);
    const row = spend.rows.at(-1)!;
    expect(row.completionTokens).toBe(usage.completion_tokens);
    expect(row.spend).toBeCloseTo((usage.prompt_tokens + usage.completion_tokens) * 0.00001, 12);
    const text = await h.metrics.registry.metrics();
    expect(text).toMatch(/gateway_output_cap_overruns_total\{[^}]*model_id="[^"]+"[^}]*\} 1/);
    // Within the cap: not counted.
    await h.chat({ model: "general", messages: [{ role: "user", content: "hi" }], max_tokens: 50 });
    expect(await h.metrics.registry.metrics()).toMatch(/gateway_output_cap_overruns_total\{[^}]*\} 1\n/);
  });
});

describe("special tokens' text", () => {
  it("is counted as text, not refused: a budgeted call to an OpenAI model with stop <|endoftext|> is answered", async () => {
    const h = await harness({
      upstreamUrl: cheap.url,
      upstreamModel: "openai/gpt-4o",
      subjects: [keySubject({ maxBudget: 10 })],
    });
    const res = await h.chat({
      model: "general",
      messages: [{ role: "user", content: "what does <|im_start|> mean?" }],
      stop: "<|endoftext|>",
      max_tokens: 20,
    });
    expect(res.status).toBe(200);
  });
});

describe("rate limits and routing", () => {
  it("expect the cap an uncapped call is sent, not the model's maximum output (a deployment's tpm below it still answers)", async () => {
    // 128,000 output tokens would not fit the deployment's 100,000 tpm: every uncapped call was a 429.
    const h = await harness({
      upstreamUrl: cheap.url,
      extraParams: "      tpm: 100000\n    model_info:\n      max_output_tokens: 128000\n",
      subjects: [keySubject({ rpmLimit: 100 })],
    });
    for (let i = 0; i < 3; i++)
      expect((await h.chat({ model: "general", messages: [{ role: "user", content: "hi" }] })).status).toBe(
        200,
      );
  });
});
