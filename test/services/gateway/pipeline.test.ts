/**
 * The whole request path with real Postgres and Redis: two gateway instances sharing one database and one
 * Redis, virtual keys made through the admin API and used through the official `openai` client, rate
 * limits, budgets under concurrency, revocation across instances, and Postgres and Redis going away.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Clock } from "../../../services/gateway/src/time/clock.js";
import { type FakeUpstream, startFakeUpstream } from "../../fixtures/openai-upstream.js";
import {
  adminCall,
  deployment,
  MASTER_KEY,
  startTestGateway,
  type TestGateway,
} from "../../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../helpers/postgres.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../../helpers/redis.js";
import { startTcpProxy, type TcpProxy } from "../../helpers/tcp-proxy.js";

// USD per token, so that costs are large enough to exhaust small budgets.
const priced = "      input_cost_per_token: 0.0001\n      output_cost_per_token: 0.0002\n";

let upstream: FakeUpstream;
let db: TestDatabase;
let prefix: string;
let a: TestGateway;
let b: TestGateway;
let offsetMs = 0;
const clock: Clock = { now: () => Date.now() + offsetMs };

const admin = adminCall;

async function newKey(
  gw: TestGateway,
  body: Record<string, unknown>,
): Promise<{ key: string; token: string }> {
  const res = await admin<{ key: string; token: string }>(gw, "POST", "/key/generate", body);
  expect(res.status).toBe(200);
  return res.body;
}

const ask = (content: string) => [{ role: "user" as const, content }];
const clientFor = (gw: TestGateway, key: string) =>
  new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });

async function startInstance(databaseUrl: string, redisUrl: string): Promise<TestGateway> {
  return startTestGateway(
    `model_list:\n${deployment("general", upstream.url, priced)}${deployment("other", upstream.url)}`,
    { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl },
    { clock, store: { flushIntervalMs: 100 }, limits: { keyPrefix: prefix } },
  );
}

beforeAll(async () => {
  upstream = await startFakeUpstream({ record: false });
  db = await createTestDatabase();
  prefix = uniquePrefix("pipeline");
  // Two instances start at once: migrations must be safe concurrently.
  [a, b] = await Promise.all([startInstance(db.url, REDIS_URL), startInstance(db.url, REDIS_URL)]);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await upstream?.close();
  await db?.drop();
  await deleteKeys(prefix);
});

describe("virtual keys through the gateway", () => {
  it("lives a whole lifecycle: generate, call, restrict models, cost, revoke on A → refused on B within 2 s", async () => {
    const user = await admin(a, "POST", "/user/new", { user_id: "alice", user_email: "alice@example.com" });
    expect(user.status).toBe(200);
    const { key, token } = await newKey(a, { user_id: "alice", key_alias: "alice-app", models: ["general"] });
    expect(key).toMatch(/^sk-/);

    const viaB = clientFor(b, key);
    const { data, response } = await viaB.chat.completions
      .create({ model: "general", messages: ask("hi"), max_tokens: 20 })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe("You said: hi");
    expect(Number(response.headers.get("x-litellm-response-cost"))).toBeGreaterThan(0);
    expect((await viaB.models.list()).data.map((m) => m.id)).toEqual(["general"]);
    await expect(viaB.chat.completions.create({ model: "other", messages: ask("x") })).rejects.toMatchObject({
      status: 403,
    });

    await expect
      .poll(
        async () =>
          (await admin<{ info: { spend: number } }>(a, "GET", `/key/info?key=${token}`)).body.info.spend,
      )
      .toBeGreaterThan(0);

    const deleted = await admin<{ deleted_keys: string[] }>(a, "POST", "/key/delete", { keys: [key] });
    expect(deleted.status).toBe(200);
    const revokedAt = Date.now();
    await expect
      .poll(
        () =>
          viaB.chat.completions.create({ model: "general", messages: ask("x") }).then(
            () => 200,
            (e: { status?: number }) => e.status,
          ),
        { timeout: 2000, interval: 50 },
      )
      .toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(2000);
  });

  it("refuses an expired key", async () => {
    const { key } = await newKey(a, { duration: "30s" });
    const client = clientFor(a, key);
    await expect(
      client.chat.completions.create({ model: "general", messages: ask("x") }),
    ).resolves.toBeDefined();
    offsetMs += 31_000;
    try {
      const error = await client.chat.completions
        .create({ model: "general", messages: ask("x") })
        .catch((e) => e);
      expect(error).toMatchObject({ status: 401 });
      expect(String(error.message)).toMatch(/expired/i);
    } finally {
      offsetMs -= 31_000;
    }
  });

  it("lets exactly rpm_limit requests through per minute across both instances", async () => {
    const { key } = await newKey(a, { rpm_limit: 5 });
    const clients = [clientFor(a, key), clientFor(b, key)];
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        clients[i % 2]!.chat.completions.create({ model: "general", messages: ask(`n${i}`) }).then(
          () => 200,
          (e: { status?: number; headers?: Headers }) => {
            expect(Number(e.headers?.get("retry-after"))).toBeGreaterThan(0);
            return e.status;
          },
        ),
      ),
    );
    expect(outcomes.filter((s) => s === 200)).toHaveLength(5);
    expect(outcomes.filter((s) => s === 429)).toHaveLength(7);
  });

  it("never overspends a small budget under 200 concurrent requests on two instances", async () => {
    const budget = 0.05;
    const { key, token } = await newKey(a, { max_budget: budget });
    const clients = [clientFor(a, key), clientFor(b, key)];
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        clients[i % 2]!.chat.completions.create({
          model: "general",
          messages: ask(`q${i}`),
          max_tokens: 8,
        }).then(
          () => ({ ok: true as const }),
          (e: { status?: number; error?: { type?: string; message?: string } }) => ({
            ok: false as const,
            e,
          }),
        ),
      ),
    );
    const succeeded = outcomes.filter((o) => o.ok).length;
    const refused = outcomes.filter((o) => !o.ok);
    expect(succeeded).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      if (r.ok) continue;
      expect(r.e.status).toBe(429);
      expect(r.e.error?.type).toBe("budget_exceeded");
      expect(r.e.error?.message).toMatch(/budget/i);
    }
    // Every call is logged (nothing lost), each refusal at spend 0 with its reason, and the total stays within
    // the budget: each reservation (prompt estimate + max_tokens) bounds its call's real cost.
    const logs = async () =>
      (
        await admin<Array<{ spend: number; status: number; reason: string | null }>>(
          a,
          "GET",
          `/spend/logs?api_key=${token}&limit=1000`,
        )
      ).body;
    await expect.poll(async () => (await logs()).length, { timeout: 5000 }).toBe(200);
    const rows = await logs();
    expect(rows.filter((row) => row.status === 200)).toHaveLength(succeeded);
    const refusals = rows.filter((row) => row.status === 429);
    expect(refusals).toHaveLength(refused.length);
    expect(refusals.every((row) => row.reason === "budget_exceeded" && Number(row.spend) === 0)).toBe(true);
    const total = rows.reduce((sum, row) => sum + Number(row.spend), 0);
    expect(total).toBeLessThanOrEqual(budget + 1e-9);
  });

  it("refuses the admin API without the master key (401) or with a virtual key (403), and bad bodies (400)", async () => {
    const { key } = await newKey(a, {});
    expect((await admin(a, "POST", "/key/generate", {}, "sk-nope")).status).toBe(401);
    expect((await admin(a, "POST", "/key/generate", {}, key)).status).toBe(403);
    const bad = await admin<{ error: { param: string } }>(a, "POST", "/key/generate", { max_budget: "lots" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe("max_budget");
  });
});

describe("dependencies going away", () => {
  let pgProxy: TcpProxy;
  let redisProxy: TcpProxy;
  let gw: TestGateway;

  beforeAll(async () => {
    pgProxy = await startTcpProxy(db.port);
    redisProxy = await startTcpProxy(Number(new URL(REDIS_URL).port || 6379));
    gw = await startInstance(db.urlVia(pgProxy.port), `redis://127.0.0.1:${redisProxy.port}`);
  });
  afterAll(async () => {
    await gw?.close();
    await pgProxy?.close();
    await redisProxy?.close();
  });

  it("keeps serving known keys while Postgres is down and loses no spend row", async () => {
    const { key, token } = await newKey(gw, { key_alias: "outage" });
    const client = clientFor(gw, key);
    await client.chat.completions.create({ model: "general", messages: ask("before") });
    pgProxy.cut();
    for (let i = 0; i < 5; i++) {
      const r = await client.chat.completions.create({ model: "general", messages: ask(`during ${i}`) });
      expect(r.choices[0]?.message.content).toBe(`You said: during ${i}`);
    }
    const ready = await fetch(`${gw.url}/health/readiness`);
    expect(ready.status).toBe(503);
    pgProxy.restore();
    const count = async () =>
      (
        await admin<unknown[]>(gw, "GET", `/spend/logs?api_key=${token}&limit=100`).catch(() => ({
          body: [],
        }))
      ).body.length;
    await expect.poll(count, { timeout: 10_000, interval: 200 }).toBe(6);
  });

  it("keeps serving with per-instance limits while Redis is down, says so, and returns to shared limits", async () => {
    const { key } = await newKey(gw, { rpm_limit: 100 });
    const client = clientFor(gw, key);
    redisProxy.cut();
    const r = await client.chat.completions.create({ model: "general", messages: ask("no redis") });
    expect(r.choices[0]?.message.content).toBe("You said: no redis");
    const readiness = async () =>
      (
        (await (
          await fetch(`${gw.url}/health/readiness`, { headers: { authorization: `Bearer ${MASTER_KEY}` } })
        ).json()) as { cache: { status: string } }
      ).cache.status;
    await expect.poll(readiness, { timeout: 5000 }).toBe("degraded");
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/^gateway_limits_shared 0$/m);
    redisProxy.restore();
    await expect.poll(readiness, { timeout: 10_000 }).toBe("connected");
  });
});
