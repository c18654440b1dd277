/**
 * The exact response cache on chat completions, through the whole gateway on the machine's Redis and Postgres:
 * a repeated question is answered from the cache at $0 with `cache_hit` in /spend/logs; two tenants never share an
 * entry (a team's keys do); the key ignores member order and spelled-out defaults; errors, cut answers and
 * guard-masked prompts are never shared; streams replay stored answers and store their own; the request's `cache`
 * controls; a hit still counts against rpm.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import type { TestGateway } from "../../../helpers/gateway.js";
import { adminCall } from "../../../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";
import { deleteKeys, inspector, uniquePrefix } from "../../../helpers/redis.js";
import { sseData } from "../../../helpers/sse.js";
import { newKey, post, spendLogs, startCachedGateway } from "./harness.js";

let upstream: FakeUpstream;
let db: TestDatabase;
let prefix: string;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream({ honourMaxTokens: true });
  db = await createTestDatabase();
  prefix = uniquePrefix("response-cache");
  gw = await startCachedGateway(upstream, { databaseUrl: db.url, prefix });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await db?.drop();
  await deleteKeys(prefix);
});

let counter = 0;
/** A question no other test asks. */
const fresh = (what = "question") => `${what} ${++counter} ${prefix}`;
const chat = (key: string, body: Record<string, unknown>) =>
  post(gw, key, "/v1/chat/completions", { model: "general", ...body });
// biome-ignore lint/suspicious/noExplicitAny: OpenAI answers and errors, asserted field by field
const json = async (res: Response): Promise<any> => res.json();
const ask = (content: string) => [{ role: "user", content }];

describe("chat completions (JSON)", () => {
  it("answers a repeated question from the cache at $0 and logs the hit with what it saved", async () => {
    const { key, token } = await newKey(gw);
    const messages = ask(fresh());
    const before = upstream.completions;
    const first = await chat(key, { messages });
    expect(first.status).toBe(200);
    const firstBody = await first.json();
    const cost = Number(first.headers.get("x-litellm-response-cost"));
    expect(cost).toBeGreaterThan(0);
    const cacheKey = first.headers.get("x-litellm-cache-key");
    expect(cacheKey).toMatch(/^[0-9a-f]{64}$/);

    const second = await chat(key, { messages });
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual(firstBody);
    expect(second.headers.get("x-litellm-response-cost")).toBe("0");
    expect(second.headers.get("x-litellm-cache-key")).toBe(cacheKey);
    expect(upstream.completions - before).toBe(1);

    const [miss, hit] = await spendLogs(gw, token, 2);
    expect(miss).toMatchObject({ cache_hit: false, cache_key: cacheKey });
    expect(miss?.spend).toBeCloseTo(cost, 10);
    expect(hit).toMatchObject({ cache_hit: true, spend: 0, cache_key: cacheKey, status: 200 });
    expect(hit?.cache_saved_spend).toBeCloseTo(cost, 10);
    expect(hit?.total_tokens).toBe(miss?.total_tokens);
    // /spend/usage (the console's Usage) counts the hit apart, with what it saved; its spend is the miss's alone.
    const usage = await adminCall<{ totals: Record<string, number> }>(
      gw,
      "GET",
      `/spend/usage?api_key=${token}&days=1`,
    );
    expect(usage.status).toBe(200);
    const { totals } = usage.body;
    expect(totals).toMatchObject({ requests: 2, cache_hits: 1 });
    expect(totals.cache_saved_spend).toBeCloseTo(cost, 10);
    expect(totals.spend).toBeCloseTo(cost, 10);

    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(
      /litellm_cache_hits_metric_total\{model="general",call_type="acompletion"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /gateway_cache_saved_spend_usd_total\{model="general",call_type="acompletion"\} 0\.\d+/,
    );
  });

  it("never shares an entry between two keys, and shares one between two keys of a team", async () => {
    const one = await newKey(gw);
    const other = await newKey(gw);
    const messages = ask(fresh());
    const before = upstream.completions;
    const a = await chat(one.key, { messages });
    const b = await chat(other.key, { messages });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(upstream.completions - before).toBe(2);
    expect(a.headers.get("x-litellm-cache-key")).not.toBe(b.headers.get("x-litellm-cache-key"));

    const team = await adminCall<{ team_id: string }>(gw, "POST", "/team/new", { team_alias: "cache-team" });
    expect(team.status).toBe(200);
    const first = await newKey(gw, { team_id: team.body.team_id });
    const second = await newKey(gw, { team_id: team.body.team_id });
    const teamBefore = upstream.completions;
    expect((await chat(first.key, { messages })).status).toBe(200);
    const hit = await chat(second.key, { messages });
    expect(hit.headers.get("x-litellm-response-cost")).toBe("0");
    expect(upstream.completions - teamBefore).toBe(1);
  });

  it("hits whatever the member order and when a default is spelled out", async () => {
    const { key } = await newKey(gw);
    const content = fresh();
    const before = upstream.completions;
    await (await chat(key, { messages: ask(content), max_tokens: 50 })).json();
    const reordered = await post(gw, key, "/v1/chat/completions", {
      max_completion_tokens: 50,
      temperature: 1,
      n: 1,
      messages: [{ content, role: "user" }],
      model: "general",
    });
    expect(reordered.headers.get("x-litellm-response-cost")).toBe("0");
    // An answer-changing parameter makes another entry.
    const warmer = await chat(key, { messages: ask(content), max_tokens: 50, temperature: 0.2 });
    expect(Number(warmer.headers.get("x-litellm-response-cost"))).toBeGreaterThan(0);
    expect(upstream.completions - before).toBe(2);
  });

  it("stores no error and no answer cut by a cap", async () => {
    const { key } = await newKey(gw);
    const messages = ask(fresh("a question with several words in it"));
    // A 400 from the upstream is not retried: the client gets it, and nothing is stored.
    upstream.failNext(1, 400);
    expect((await chat(key, { messages })).status).toBe(400);
    const before = upstream.completions;
    expect((await chat(key, { messages })).status).toBe(200);
    expect(upstream.completions - before).toBe(1);

    const cut = ask(fresh("a long question that the cap of two tokens cuts short"));
    const first = await chat(key, { messages: cut, max_tokens: 2 });
    expect((await json(first)).choices[0].finish_reason).toBe("length");
    const again = await chat(key, { messages: cut, max_tokens: 2 });
    expect(Number(again.headers.get("x-litellm-response-cost"))).toBeGreaterThan(0);
    expect(upstream.completions - before).toBe(3);
  });

  it("does not share an entry between two prompts the PII guard masks to the same text", async () => {
    const { key } = await newKey(gw);
    const question = fresh("write to");
    const before = upstream.completions;
    const alice = await chat(key, { messages: ask(`${question} alice@example.com`) });
    const bob = await chat(key, { messages: ask(`${question} bob@example.org`) });
    expect([alice.status, bob.status]).toEqual([200, 200]);
    expect(upstream.completions - before).toBe(2);
    // What went upstream was the same masked text: only the client's own text tells them apart.
    const [sentA, sentB] = upstream.requests.slice(-2).map((r) => JSON.stringify(r.body?.messages));
    expect(sentA).toBe(sentB);
    expect(sentA).not.toContain("@example");
  });

  it("counts a hit as a request against rpm", async () => {
    const { key } = await newKey(gw, { rpm_limit: 2 });
    const messages = ask(fresh());
    expect((await chat(key, { messages })).status).toBe(200);
    const hit = await chat(key, { messages });
    expect(hit.headers.get("x-litellm-response-cost")).toBe("0");
    expect((await chat(key, { messages })).status).toBe(429);
  });
});

describe("streams", () => {
  it("replays an entry stored from JSON as chunks ending in [DONE], with usage when asked", async () => {
    const { key } = await newKey(gw);
    const messages = ask(fresh());
    const stored = await json(await chat(key, { messages }));
    const before = upstream.completions;
    const res = await chat(key, { messages, stream: true, stream_options: { include_usage: true } });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(res.headers.get("x-litellm-cache-key")).toMatch(/^[0-9a-f]{64}$/);
    const data = sseData(await res.text());
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    expect(text).toBe(stored.choices[0].message.content);
    expect(chunks.at(-1).usage).toEqual(stored.usage);
    expect(upstream.completions).toBe(before);

    const plain = sseData(await (await chat(key, { messages, stream: true })).text());
    expect(plain.slice(0, -1).every((d) => JSON.parse(d).usage === undefined)).toBe(true);
  });

  it("stores a finished stream, which a JSON request then hits", async () => {
    const { key, token } = await newKey(gw);
    const messages = ask(fresh());
    const before = upstream.completions;
    const streamed = sseData(await (await chat(key, { messages, stream: true })).text());
    const text = streamed
      .slice(0, -1)
      .map((d) => JSON.parse(d).choices[0]?.delta?.content ?? "")
      .join("");
    // The store is written after the stream ended: wait until the entry is there.
    const redis = inspector();
    try {
      await expect.poll(async () => (await redis.keys(`${prefix}rc:*:key:${token}:*`)).length).toBe(1);
    } finally {
      redis.disconnect();
    }
    const hit = await chat(key, { messages });
    expect(hit.headers.get("x-litellm-response-cost")).toBe("0");
    const body = await json(hit);
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0].message.content).toBe(text);
    expect(upstream.completions - before).toBe(1);
  });
});

describe("the request's cache controls", () => {
  it("no-cache skips the lookup, no-store the store; neither goes upstream", async () => {
    const { key } = await newKey(gw);
    const messages = ask(fresh());
    const before = upstream.completions;
    await (await chat(key, { messages, cache: { "no-store": true } })).json();
    expect(upstream.requests.at(-1)?.body?.cache).toBeUndefined();
    await (await chat(key, { messages })).json(); // not stored before: a miss, stored now
    const skipped = await chat(key, { messages, cache: { "no-cache": true } });
    expect(Number(skipped.headers.get("x-litellm-response-cost"))).toBeGreaterThan(0);
    expect(upstream.completions - before).toBe(3);
    expect((await chat(key, { messages })).headers.get("x-litellm-response-cost")).toBe("0");
  });

  it("namespace makes its own entries; ttl sets the entry's lifetime; s-maxage refuses older entries", async () => {
    const { key, token } = await newKey(gw);
    const messages = ask(fresh());
    await (await chat(key, { messages, cache: { ttl: 30 } })).json();
    const other = await chat(key, { messages, cache: { namespace: "eval" } });
    expect(Number(other.headers.get("x-litellm-response-cost"))).toBeGreaterThan(0);
    const redis = inspector();
    try {
      // The gateway writes on its own connection: wait until both entries are there.
      await expect.poll(async () => (await redis.keys(`${prefix}rc:*:key:${token}:*`)).length).toBe(2);
      const [stored] = await redis.keys(`${prefix}rc::key:${token}:*`);
      expect(stored).toBeDefined();
      const ttl = await redis.ttl(stored ?? "");
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(30);
      expect(await redis.keys(`${prefix}rc:eval:key:${token}:*`)).toHaveLength(1);
    } finally {
      redis.disconnect();
    }
    await new Promise((r) => setTimeout(r, 1100));
    const stale = await chat(key, { messages, cache: { "s-maxage": 1 } });
    expect(Number(stale.headers.get("x-litellm-response-cost"))).toBeGreaterThan(0);
  });

  it("refuses controls that are not valid with a 400 naming them", async () => {
    const { key } = await newKey(gw);
    const bad = await chat(key, { messages: ask("x"), cache: { ttl: "soon" } });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.param).toBe("cache.ttl");
    const unknown = await chat(key, { messages: ask("x"), cache: { "no-cahce": true } });
    expect(unknown.status).toBe(400);
  });
});
