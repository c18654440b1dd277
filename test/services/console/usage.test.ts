/**
 * The Usage tab's figures against a real gateway: cached input tokens and what caching saved (issue 29's
 * console item), and failed calls counted apart from the answered ones (issue 34, defect 4).
 */
import type { ModelInfoResponse } from "@platform/admin-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cachingSavings, inputPrices } from "../../../services/console/server/caching-savings.js";
import {
  type ConsoleStack,
  chatVisitor,
  leaveMidStream,
  startConsoleStack,
  type Visitor,
} from "../../helpers/console.js";
import { waitFor } from "../../helpers/redis.js";

let stack: ConsoleStack;
let alice: Visitor;

interface Usage {
  totals: { requests: number; failed_requests: number; cached_tokens: number; prompt_tokens: number };
  caching: { cached_tokens: number; saved: number; unpriced_tokens: number };
  recent: Array<{ status: number }>;
  cache_reads?: unknown;
}

beforeAll(async () => {
  stack = await startConsoleStack();
  let aliceId: string;
  ({ visitor: alice, userId: aliceId } = await chatVisitor(stack, "alice@example.com"));
  const key = await stack.admin.generateKey({ user_id: aliceId, key_alias: "cached" });
  const client = stack.gateway.clientWith(key.key).withOptions({ maxRetries: 0 });
  const body = { model: "general", messages: [{ role: "user" as const, content: "a long system prompt" }] };
  // 800 of 1,000 prompt tokens read from the cache.
  stack.upstream.nextUsage({
    prompt_tokens: 1000,
    completion_tokens: 10,
    total_tokens: 1010,
    prompt_tokens_details: { cached_tokens: 800 },
  });
  await client.chat.completions.create(body);
  await client.chat.completions.create(body);
  // A client that leaves mid-stream: booked as 499.
  const release = await leaveMidStream(stack.upstream, client, "general");
  await waitFor("three calls booked", async () => {
    return (await stack.admin.usage({ user_id: aliceId, days: 7 })).totals.requests === 3;
  });
  release();
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

describe("GET /api/usage", () => {
  it("gives the cached tokens and what they saved at the deployment's prices", async () => {
    const res = await alice.request<Usage>("GET", "/api/usage?days=7");
    expect(res.status).toBe(200);
    expect(res.body.totals.cached_tokens).toBe(800);
    // 800 tokens × ($0.0001 fresh − $0.00001 cached) per token.
    expect(res.body.caching).toEqual({ cached_tokens: 800, saved: expect.any(Number), unpriced_tokens: 0 });
    expect(res.body.caching.saved).toBeCloseTo(800 * (0.0001 - 0.00001), 10);
    expect(res.body.cache_reads).toBeUndefined();
  });

  it("counts the failed call apart from the answered ones, with its status in the recent requests", async () => {
    const res = await alice.request<Usage>("GET", "/api/usage?days=7");
    expect(res.body.totals).toMatchObject({ requests: 3, failed_requests: 1 });
    expect(res.body.recent.map((r) => r.status).sort()).toEqual([200, 200, 499]);
  });
});

describe("date range", () => {
  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

  it("gives the usage of a from/to range of UTC days, both included", async () => {
    const today = await alice.request<Usage & { days: number; end_date: string }>(
      "GET",
      `/api/usage?from=${day(-2)}&to=${day(0)}`,
    );
    expect(today.status).toBe(200);
    expect(today.body).toMatchObject({ days: 3, end_date: day(0) });
    expect(today.body.totals.requests).toBe(3);
    const before = await alice.request<Usage>("GET", `/api/usage?from=${day(-9)}&to=${day(-1)}`);
    expect(before.body.totals.requests).toBe(0);
    expect(before.body.caching.cached_tokens).toBe(0);
  });

  it("lists the range's requests for paging, and exports the range", async () => {
    const all = await alice.request<{ requests: Array<{ status: number }>; truncated: boolean }>(
      "GET",
      `/api/usage/requests?from=${day(-1)}&to=${day(0)}`,
    );
    expect(all.status).toBe(200);
    expect(all.body.requests).toHaveLength(3);
    expect(all.body.truncated).toBe(false);
    const none = await alice.request<{ requests: unknown[] }>(
      "GET",
      `/api/usage/requests?from=${day(-5)}&to=${day(-1)}`,
    );
    expect(none.body.requests).toEqual([]);
    const csv = await alice.request("GET", `/api/usage/export.csv?from=${day(-1)}&to=${day(0)}`);
    expect(csv.headers.get("content-disposition")).toContain(`usage-${day(-1)}_${day(0)}-`);
    expect(csv.text.trimEnd().split("\r\n")).toHaveLength(4);
    const old = await alice.request("GET", `/api/usage/export.csv?from=${day(-5)}&to=${day(-1)}`);
    expect(old.text.trimEnd().split("\r\n")).toHaveLength(1); // the header only
  });

  it("refuses a range it cannot serve with a 400 naming the field", async () => {
    const cases: Array<[string, string]> = [
      [`from=${day(0)}`, "to"],
      [`to=${day(0)}`, "from"],
      [`from=${day(0)}&to=${day(-1)}`, "to"],
      [`from=2020-01-01&to=2021-12-31`, "to"],
      [`from=2026-02-30&to=2026-03-01`, "from"],
      [`days=7&from=${day(-1)}&to=${day(0)}`, "days"],
      ["days=14", "days"],
    ];
    for (const [query, param] of cases) {
      const res = await alice.request<{ error: { param: string } }>("GET", `/api/usage?${query}`);
      expect([query, res.status, res.body.error.param]).toEqual([query, 400, param]);
    }
  });
});

describe("caching savings", () => {
  const info = (extra: Partial<ModelInfoResponse["data"][number]["model_info"]>) => ({
    id: "d1",
    input_cost_per_token: 3e-6,
    output_cost_per_token: 15e-6,
    ...extra,
  });
  it("prices a long-context read at the tier's prices, a cache price without its tier scaled as input's", () => {
    const tiered = info({
      cache_read_input_token_cost: 0.3e-6,
      input_cost_per_token_above_200k_tokens: 6e-6,
    });
    expect(inputPrices(tiered, false)).toEqual({ fresh: 3e-6, cached: 0.3e-6 });
    const long = inputPrices(tiered, true);
    expect(long.fresh).toBe(6e-6);
    expect(long.cached).toBeCloseTo(0.6e-6, 15);
    expect(
      inputPrices({ ...tiered, cache_read_input_token_cost_above_200k_tokens: 0.5e-6 }, true).cached,
    ).toBe(0.5e-6);
  });
  it("saves nothing without a cache price and keeps reads of an unlisted deployment apart", () => {
    const models = {
      data: [{ model_name: "m", litellm_params: { model: "openai/m" }, model_info: info({}) }],
    };
    const reads = [
      { model_id: "d1", long_context: false, cached_tokens: 100 },
      { model_id: "gone", long_context: false, cached_tokens: 50 },
    ];
    expect(cachingSavings(reads, models)).toEqual({ cached_tokens: 150, saved: 0, unpriced_tokens: 50 });
  });
});
