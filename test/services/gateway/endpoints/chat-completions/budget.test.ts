/**
 * Budgets on the chat path: the reservation covers the prompt however the body was uploaded, a refusal tells
 * SDKs not to retry and says what the call would reserve, and costs are rounded to 1e-10 USD.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallResult } from "../../../../../services/gateway/src/pipeline/types.js";
import { type FakeUpstream, startFakeUpstream } from "../../../../fixtures/openai-upstream.js";
import { chunkedBody } from "../../../../helpers/chunked.js";
import { waitFor } from "../../../../helpers/redis.js";
import { keySubject } from "../../limits/subjects.js";
import { type ChatHarness, rowsRecorder, startChatHarness } from "./harness.js";

let upstream: FakeUpstream;
const open: ChatHarness[] = [];
/** Every finished call's result, from the harnesses' observer. */
const results: CallResult[] = [];

beforeAll(async () => {
  // Streams take a while (20 ms between chunks), so calls overlap as they would under real load.
  upstream = await startFakeUpstream({ record: false, chunkDelayMs: 20 });
});
afterAll(async () => {
  await Promise.all(open.map((h) => h.close()));
  await upstream.close();
});

async function harness(
  maxBudget: number,
  pricePerToken?: number,
  spend = rowsRecorder(),
): Promise<ChatHarness> {
  const h = await startChatHarness({
    upstreamUrl: upstream.url,
    subjects: [keySubject({ maxBudget, alias: "small" })],
    spend,
    observers: [{ onCallFinished: (_call, result) => results.push(result) }],
    ...(pricePerToken === undefined ? {} : { pricePerToken }),
  });
  open.push(h);
  return h;
}

describe("budget reservation", () => {
  it("holds under 150 concurrent chunked uploads: spend stays within a $0.50 budget", async () => {
    const h = await harness(0.5);
    // ~1,000 prompt tokens at $0.00001: about $0.01 a call, so 150 calls would spend ~$1.50 unchecked. The
    // fake echoes the last user message, so the answer stays a few tokens, as max_tokens: 1 asks.
    const json = JSON.stringify({
      model: "general",
      messages: [
        { role: "system", content: "lorem ipsum ".repeat(334) },
        { role: "user", content: "hi" },
      ],
      max_tokens: 1,
      stream: true,
    });
    results.length = 0;
    const statuses = await Promise.all(
      Array.from({ length: 150 }, async () => {
        const res = await h.chat("", chunkedBody(json));
        await res.arrayBuffer();
        return res.status;
      }),
    );
    await waitFor("every call observed", () => results.length === 150);
    const admitted = statuses.filter((s) => s === 200).length;
    expect(admitted + statuses.filter((s) => s === 429).length).toBe(150);
    expect(admitted).toBeGreaterThan(10);
    const spent = results.reduce((sum, r) => sum + r.cost, 0);
    expect(spent).toBeLessThanOrEqual(0.5);
  });
});

interface ErrorBody {
  error: { message: string; type: string; code: string };
}

describe("budget refusal", () => {
  it("tells SDKs not to retry and says what the call would reserve and that max_tokens lowers it", async () => {
    const h = await harness(0.001);
    const ask = (max_tokens: number) =>
      h.chat({ model: "general", messages: [{ role: "user", content: "hi" }], max_tokens });
    const refused = await ask(1000);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-should-retry")).toBe("false");
    expect(refused.headers.get("retry-after")).toBeNull();
    const { error } = (await refused.json()) as ErrorBody;
    expect(error.type).toBe("budget_exceeded");
    // (prompt estimate + 1,000 max_tokens) × $0.00001: a bit over $0.01.
    expect(error.message).toMatch(/would reserve \$0\.010\d+/);
    expect(error.message).toContain("lower max_tokens");
    expect((await ask(10)).status).toBe(200);
  });

  it("a call without max_tokens that not even one output token fits is told its prompt is too long, not to lower max_tokens", async () => {
    const h = await harness(0.001);
    // ~1,000 prompt tokens at $0.00001: about $0.01, ten times the budget.
    const refused = await h.chat({
      model: "general",
      messages: [{ role: "user", content: "lorem ipsum ".repeat(500) }],
    });
    expect(refused.status).toBe(429);
    const { error } = (await refused.json()) as ErrorBody;
    expect(error.type).toBe("budget_exceeded");
    expect(error.message).not.toContain("lower max_tokens");
    expect(error.message).toMatch(/sets no max_tokens, and its prompt alone may cost up to \$0\.0\d+/);
    expect(error.message).toContain("a shorter prompt");
  });
});

describe("cost rounding", () => {
  it("rounds the cost to 1e-10 USD in x-litellm-response-cost and the spend row", async () => {
    const spend = rowsRecorder();
    // "hello": 2 prompt + 4 completion tokens at $0.00005 = 0.00030000000000000003 in floating point.
    const h = await harness(10, 0.00005, spend);
    const res = await h.chat({ model: "general", messages: [{ role: "user", content: "hello" }] });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-litellm-response-cost")).toBe("0.0003");
    expect(spend.rows.map((r) => r.spend)).toEqual([0.0003]);
  });
});
