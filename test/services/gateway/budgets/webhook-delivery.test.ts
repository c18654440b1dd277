/**
 * Budget events end to end: two gateway instances sharing one Postgres database and one Redis, a key whose
 * budget is crossed by concurrent calls through both, and a Slack webhook that fails the first delivery. The
 * receiver must still get exactly one 80 % warning and one "budget exceeded" event.
 */
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
// than the gateway's estimate: that is how settled spend can reach the whole budget despite reservations.
const priced = "      input_cost_per_token: 0.000001\n      output_cost_per_token: 0.0001\n";
const content = "Tell me about budgets. ".repeat(8);

let upstream: FakeUpstream;
let hook: FakeSlackWebhook;
let db: TestDatabase;
let prefix: string;
let instances: TestGateway[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream({ record: false });
  hook = await startFakeSlackWebhook();
  db = await createTestDatabase();
  prefix = uniquePrefix("budget-webhook");
  const start = () =>
    startTestGateway(
      `model_list:\n${deployment("general", upstream.url, priced)}`,
      { DATABASE_URL: db.url, REDIS_URL, BUDGET_WEBHOOK_URL: hook.url },
      {
        store: { flushIntervalMs: 100 },
        limits: { keyPrefix: prefix },
        budgetSender: { intervalMs: 100, initialBackoffMs: 200 },
      },
    );
  instances = await Promise.all([start(), start()]);
});
afterAll(async () => {
  for (const gw of instances) await gw.close();
  await hook?.close();
  await upstream?.close();
  await db?.drop();
  await deleteKeys(prefix);
});

type Outcome = { ok: true; cost: number } | { ok: false; status?: number; message: string };

async function chat(client: OpenAI): Promise<Outcome> {
  try {
    const { response } = await client.chat.completions
      .create({ model: "general", messages: [{ role: "user", content }], max_tokens: 1 })
      .withResponse();
    return { ok: true, cost: Number(response.headers.get("x-litellm-response-cost")) };
  } catch (error) {
    const e = error as { status?: number; error?: { message?: string } };
    return { ok: false, status: e.status, message: e.error?.message ?? String(error) };
  }
}

describe("budget webhook with two gateway instances", () => {
  it("delivers exactly one 80 % and one exceeded event although the first delivery fails", async () => {
    const [a, b] = instances as [TestGateway, TestGateway];
    // One call's cost (master key: no budget); the budget is 2.6 of them, so settled spend passes 80 % and then
    // the whole budget whatever order the concurrent calls settle in (a reservation is under 0.1 of a call).
    const probe = await chat(a.client);
    if (!probe.ok) throw new Error(`probe call failed: ${probe.message}`);
    const budget = Number((probe.cost * 2.6).toFixed(6));
    const created = await adminCall<{ key: string; token: string }>(a, "POST", "/key/generate", {
      key_alias: "team-bot",
      max_budget: budget,
    });
    expect(created.status).toBe(200);
    hook.failNext(1);

    const clients = [a, b].map(
      (gw) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: created.body.key, maxRetries: 0 }),
    );
    // Waves of 8 concurrent calls, half on each instance, until one is refused because the budget is used up.
    let usedUp: Outcome | undefined;
    let succeeded = 0;
    for (let wave = 0; wave < 10 && usedUp === undefined; wave += 1) {
      const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(clients[i % 2]!)));
      succeeded += outcomes.filter((o) => o.ok).length;
      usedUp = outcomes.find((o) => !o.ok && /budget is used up/.test(o.message));
      for (const o of outcomes) if (!o.ok) expect(o.status).toBe(429);
    }
    expect(usedUp).toBeDefined();
    expect(succeeded).toBeGreaterThanOrEqual(3);

    await expect.poll(() => hook.bodies.length, { timeout: 15_000, interval: 100 }).toBe(2);
    // Both rows are marked delivered, so no sender will post them again.
    const sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    try {
      const rows = await sql.query(
        "SELECT threshold::float8 AS threshold, attempts FROM budget_events WHERE delivered_at IS NOT NULL ORDER BY threshold",
      );
      expect(rows.rows.map((r) => r.threshold)).toEqual([0.8, 1]);
      expect(rows.rows.map((r) => r.attempts).sort()).toEqual([1, 2]); // one of them was refused once
      const pending = await sql.query(
        "SELECT count(*)::int AS n FROM budget_events WHERE delivered_at IS NULL",
      );
      expect(pending.rows[0].n).toBe(0);
    } finally {
      await sql.end();
    }
    expect(hook.posts()).toBe(3);
    const events = [...hook.bodies].sort((x, y) => Number(x.threshold) - Number(y.threshold));
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
    expect(Number(events[1]!.spend)).toBeGreaterThanOrEqual(budget);
  });
});
