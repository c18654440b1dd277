/**
 * Budget events end to end: gateway instances sharing one Postgres database and one Redis, a key whose budget is
 * crossed by concurrent calls, and a Slack webhook that fails the first delivery. The receiver must still get
 * exactly one 80 % warning and one "budget exceeded" event, also when the events were recorded by a gateway that
 * stopped before sending them.
 */
import { setTimeout as sleep } from "node:timers/promises";
import OpenAI from "openai";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { type FakeSlackWebhook, startFakeSlackWebhook } from "../../../fixtures/slack-webhook.js";
import { adminCall, deployment, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../../../helpers/redis.js";

// Completion tokens priced far above prompt tokens. The fake upstream ignores max_tokens (its reply echoes the
// prompt), so a call sent with max_tokens: 1 costs several times its reservation, as when a provider bills more
// than the gateway's estimate: that is how settled spend can reach the whole budget despite reservations. Only
// until the gateway sees it: the first overrun marks the deployment, and its later calls are cut at their
// reservation (docs/limits.md, "Deployments that ignore the cap"). So the cost of a call is measured on `probe`, a
// second deployment of the same upstream and prices, and `general` overruns first in the key's first wave.
const priced = "      input_cost_per_token: 0.000001\n      output_cost_per_token: 0.0001\n";
const content = "Tell me about budgets. ".repeat(8);

let upstream: FakeUpstream;
let prefix: string;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  upstream = await startFakeUpstream({ record: false });
  prefix = uniquePrefix("budget-webhook");
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await upstream?.close();
  await deleteKeys(prefix);
});

/** A fresh database, dropped after the suite. */
/** Each test's database and its own Redis key space (limits, and the marks of deployments that ignore caps). */
const keySpaces = new Map<TestDatabase, string>();

async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  closers.push(() => db.drop());
  keySpaces.set(db, `${prefix}${keySpaces.size}:`);
  return db;
}

/** A gateway on `db` and the shared Redis, posting budget events to `webhookUrl` (none: only recorded). */
async function startInstance(db: TestDatabase, webhookUrl?: string): Promise<TestGateway> {
  const gw = await startTestGateway(
    `model_list:\n${deployment("general", upstream.url, priced)}${deployment("probe", upstream.url, priced)}`,
    {
      DATABASE_URL: db.url,
      REDIS_URL,
      ...(webhookUrl === undefined ? {} : { BUDGET_WEBHOOK_URL: webhookUrl }),
    },
    {
      store: { flushIntervalMs: 100 },
      limits: { keyPrefix: keySpaces.get(db) },
      budgetSender: { intervalMs: 100, initialBackoffMs: 200 },
    },
  );
  closers.push(() => gw.close());
  return gw;
}

async function slackWebhook(): Promise<FakeSlackWebhook> {
  const hook = await startFakeSlackWebhook();
  closers.push(() => hook.close());
  return hook;
}

type Outcome = { ok: true; cost: number } | { ok: false; status?: number; message: string };

async function chat(client: OpenAI, model = "general"): Promise<Outcome> {
  try {
    const { response } = await client.chat.completions
      .create({ model, messages: [{ role: "user", content }], max_tokens: 1 })
      .withResponse();
    return { ok: true, cost: Number(response.headers.get("x-litellm-response-cost")) };
  } catch (error) {
    const e = error as { status?: number; error?: { message?: string } };
    return { ok: false, status: e.status, message: e.error?.message ?? String(error) };
  }
}

/**
 * Makes a key (alias `team-bot`) whose budget is 2.6 calls (measured by a call to `probe` with the master key), then sends
 * waves of 8 concurrent calls spread over `gateways` until a call was refused and both budget events (80 % and
 * exhausted: a call refused by settled spend alone) are recorded in `db`. Whether a refusal's message says calls
 * are in flight depends on whether the other instance's lease still holds a slice, so the events themselves, not
 * the wording, say when the budget is used up. @returns the budget (USD).
 */
async function exhaustBudget(gateways: TestGateway[], db: TestDatabase): Promise<number> {
  const probe = await chat(gateways[0]!.client, "probe");
  if (!probe.ok) throw new Error(`probe call failed: ${probe.message}`);
  const budget = Number((probe.cost * 2.6).toFixed(6));
  const created = await adminCall<{ key: string }>(gateways[0]!, "POST", "/key/generate", {
    key_alias: "team-bot",
    max_budget: budget,
  });
  expect(created.status).toBe(200);
  const clients = gateways.map(
    (gw) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: created.body.key, maxRetries: 0 }),
  );
  let exhausted = false;
  let succeeded = 0;
  // Whether the first wave overruns the budget at once depends on whether its first answer marks the deployment
  // before the other calls are sent; if it does, the cut calls creep up to the budget over a few waves instead.
  for (let wave = 0; wave < 30 && !exhausted; wave += 1) {
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => chat(clients[i % clients.length]!)),
    );
    succeeded += outcomes.filter((o) => o.ok).length;
    for (const o of outcomes) if (!o.ok) expect(o.status).toBe(429);
    if (outcomes.every((o) => o.ok)) continue;
    // The events are recorded off the request path: give them a moment.
    for (let look = 0; look < 20 && !exhausted; look += 1) {
      exhausted = (await eventRows(db)).length === 2;
      if (!exhausted) await sleep(50);
    }
  }
  expect(exhausted).toBe(true);
  expect(succeeded).toBeGreaterThanOrEqual(3);
  return budget;
}

/** `budget_events` rows: threshold, attempts, delivered or not. */
async function eventRows(db: TestDatabase) {
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  try {
    const result = await sql.query<{ threshold: number; attempts: number; delivered: boolean }>(
      `SELECT threshold::float8 AS threshold, attempts, delivered_at IS NOT NULL AS delivered
       FROM budget_events ORDER BY threshold`,
    );
    return result.rows;
  } finally {
    await sql.end();
  }
}

/** The two events for key `team-bot` and `budget`, in threshold order. */
function expectBothEvents(bodies: Array<Record<string, unknown>>, budget: number): void {
  const events = [...bodies].sort((x, y) => Number(x.threshold) - Number(y.threshold));
  expect(events).toEqual([
    expect.objectContaining({
      event: "budget_threshold_reached",
      threshold: 0.8,
      scope: "key",
      key_alias: "team-bot",
      budget: String(budget),
      text: expect.stringMatching(/^Key team-bot: 80% of budget reached — spent \$[\d.]+ of \$/),
    }),
    expect.objectContaining({
      event: "budget_exceeded",
      threshold: 1,
      scope: "key",
      key_alias: "team-bot",
      budget: String(budget),
      text: expect.stringMatching(/^Key team-bot: budget exhausted — spent \$[\d.]+ of \$/),
    }),
  ]);
  // Recorded by the first refusal on settled spend (spend just short of the budget) or by the spend writer.
  expect(Number(events[1]!.spend)).toBeGreaterThanOrEqual(budget * 0.8);
}

describe("budget webhook with gateway instances sharing Postgres and Redis", () => {
  it("delivers exactly one 80 % and one exceeded event from two instances although the first delivery fails", async () => {
    const db = await database();
    const hook = await slackWebhook();
    const instances = await Promise.all([startInstance(db, hook.url), startInstance(db, hook.url)]);
    hook.failNext(1);
    const budget = await exhaustBudget(instances, db);

    // Both rows end up marked delivered (after the receiver's 200), so no sender posts them again.
    const delivered = async () => (await eventRows(db)).filter((r) => r.delivered).length;
    await expect.poll(delivered, { timeout: 15_000, interval: 100 }).toBe(2);
    expect(await eventRows(db)).toEqual([
      { threshold: 0.8, attempts: expect.any(Number), delivered: true },
      { threshold: 1, attempts: expect.any(Number), delivered: true },
    ]);
    expect((await eventRows(db)).map((r) => r.attempts).sort()).toEqual([1, 2]); // one was refused once
    expect(hook.posts()).toBe(3);
    expectBothEvents(hook.bodies, budget);
  });

  it("keeps events recorded while no sender ran; a gateway started later delivers each once", async () => {
    const db = await database();
    const quiet = await startInstance(db); // no BUDGET_WEBHOOK_URL: events are recorded, not sent
    const budget = await exhaustBudget([quiet], db);
    await expect.poll(async () => (await eventRows(db)).length, { timeout: 10_000 }).toBe(2);
    await quiet.close();

    const hook = await slackWebhook();
    await Promise.all([startInstance(db, hook.url), startInstance(db, hook.url)]);
    const deliveredFirstTime = async () =>
      (await eventRows(db)).filter((r) => r.delivered && r.attempts === 1).length;
    await expect.poll(deliveredFirstTime, { timeout: 15_000, interval: 100 }).toBe(2);
    expect(hook.posts()).toBe(2);
    expectBothEvents(hook.bodies, budget);
  });

  it("records budget_exceeded when settled spend alone refuses a call, although spend stopped short of the budget", async () => {
    const db = await database();
    const gw = await startInstance(db);
    // max_tokens 1960 reserves 1960 output tokens ($0.196); the fake answers a few dozen (about $0.005), so the
    // call settles far below its reservation. The second call's reservation no longer fits beside that spend.
    const created = await adminCall<{ key: string }>(gw, "POST", "/key/generate", {
      key_alias: "short-of-budget",
      max_budget: 0.2,
    });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: created.body.key, maxRetries: 0 });
    const call = () =>
      client.chat.completions.create({
        model: "general",
        messages: [{ role: "user", content }],
        max_tokens: 1960,
      });
    await call();
    const refused = await call().catch((error: { status?: number }) => error);
    expect(refused).toMatchObject({ status: 429 });
    await call().catch(() => undefined); // refused again: still one event

    const rows = async () => {
      const sql = new pg.Client({ connectionString: db.url });
      await sql.connect();
      try {
        return (
          await sql.query<{ threshold: number; spend: string; event: string }>(
            `SELECT threshold::float8 AS threshold, payload->>'spend' AS spend, payload->>'event' AS event
             FROM budget_events`,
          )
        ).rows;
      } finally {
        await sql.end();
      }
    };
    await expect.poll(async () => (await rows()).length, { timeout: 10_000, interval: 100 }).toBe(1);
    const [event] = await rows();
    expect(event).toMatchObject({ threshold: 1, event: "budget_exceeded" });
    expect(Number(event!.spend)).toBeGreaterThan(0);
    expect(Number(event!.spend)).toBeLessThan(0.2 * 0.8);
  });
});
