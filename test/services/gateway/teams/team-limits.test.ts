/**
 * Team enforcement with two gateway instances sharing Postgres and Redis (the admission and leases of
 * `limits/`): a burst over both instances with two keys of one team never books past the team's budget; a
 * member's `max_budget_in_team` binds while the rest of the team goes on; team rpm is shared by the team's keys
 * across instances; the owner's personal budget does not bind a team key (LiteLLM's rule); team `models` bind
 * the team's keys and the fallbacks of their route plan; a team blocked on one instance is refused on the other;
 * spend rows carry `team_id`; a team key's calls carry the `team`/`team_alias` metric labels; a team budget used
 * up across both instances posts its 80 % and exhausted webhook events once each.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { type FakeSlackWebhook, startFakeSlackWebhook } from "../../../fixtures/slack-webhook.js";
import { adminCall, deployment, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";
import { metricValue } from "../../../helpers/metrics.js";
import { createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";
import { deleteKeys, REDIS_URL, uniquePrefix, waitFor } from "../../../helpers/redis.js";

// USD per token: a call of ~15 prompt tokens and max_tokens 20 reserves well under a cent.
const priced = "      input_cost_per_token: 0.0001\n      output_cost_per_token: 0.0002\n";

let upstream: FakeUpstream;
let flaky: FakeUpstream;
let premium: FakeUpstream;
let hook: FakeSlackWebhook;
let db: TestDatabase;
let prefix: string;
let a: TestGateway;
let b: TestGateway;

function config(): string {
  return [
    "model_list:",
    deployment("general", upstream.url, priced),
    deployment("flaky", flaky.url, priced),
    deployment("premium", premium.url, priced),
    "litellm_settings:",
    "  fallbacks:",
    "    - flaky: [premium]",
    "",
  ].join("\n");
}

const start = () =>
  startTestGateway(
    config(),
    { DATABASE_URL: db.url, REDIS_URL, BUDGET_WEBHOOK_URL: hook.url },
    {
      store: { flushIntervalMs: 50 },
      limits: { keyPrefix: prefix },
      budgetSender: { intervalMs: 100, initialBackoffMs: 200 },
    },
  );

const admin = <T = Record<string, unknown>>(method: "GET" | "POST", path: string, body?: unknown) =>
  adminCall<T>(a, method, path, body);

async function ok<T = Record<string, unknown>>(method: "GET" | "POST", path: string, body?: unknown) {
  const res = await admin<T>(method, path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** A team key (the full `sk-…`) for `team_id` (and `user_id`, a member). */
async function teamKey(teamId: string, userId?: string): Promise<{ key: string; token: string }> {
  const body = await ok<{ key: string; token: string }>("POST", "/key/generate", {
    team_id: teamId,
    ...(userId === undefined ? {} : { user_id: userId }),
  });
  return body;
}

/** One chat call; the status and the parsed body. */
async function chat(gw: TestGateway, key: string, model = "general") {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hello there" }], max_tokens: 20 }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: OpenAI answers and errors, asserted field by field
  return { status: res.status, body: (await res.json()) as any };
}

async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** Waits until every booked (answered) call of the team is in the spend log, then its sums. */
async function teamSpend(teamId: string, calls: number) {
  await waitFor(
    `${calls} spend rows of team ${teamId}`,
    async () =>
      (
        await query<{ n: number }>(
          "SELECT count(*)::int AS n FROM spend_logs WHERE team_id = $1 AND status < 400",
          [teamId],
        )
      )[0]?.n === calls,
  );
  const [logged] = await query<{ sum: string }>(
    "SELECT sum(spend) AS sum FROM spend_logs WHERE team_id = $1",
    [teamId],
  );
  const [team] = await query<{ spend: string }>("SELECT spend FROM teams WHERE team_id = $1", [teamId]);
  return { logged: Number(logged?.sum ?? 0), booked: Number(team?.spend ?? 0) };
}

beforeAll(async () => {
  upstream = await startFakeUpstream({ record: false, honourMaxTokens: true });
  flaky = await startFakeUpstream({ record: false });
  premium = await startFakeUpstream({ record: false, honourMaxTokens: true });
  flaky.failNext(1_000_000, 500);
  hook = await startFakeSlackWebhook();
  db = await createTestDatabase();
  prefix = uniquePrefix("teams");
  a = await start();
  b = await start();
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await Promise.all([upstream?.close(), flaky?.close(), premium?.close(), hook?.close()]);
  await db?.drop();
  await deleteKeys(prefix);
});

describe("a team budget", () => {
  it("is shared by the team's keys on both instances: a concurrent burst of three keys never books past it", async () => {
    await ok("POST", "/team/new", { team_id: "burst", max_budget: 0.05 });
    const keys = [await teamKey("burst"), await teamKey("burst"), await teamKey("burst")];
    // Each key on each instance (i mod 2 picks the instance, i mod 3 the key).
    const calls = Array.from({ length: 42 }, (_, i) =>
      chat(i % 2 === 0 ? a : b, (keys[i % 3] as { key: string }).key),
    );
    const results = await Promise.all(calls);
    const served = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(served.length + refused.length).toBe(42);
    expect(served.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.body.error.type).toBe("budget_exceeded");
      expect(r.body.error.message).toContain('Team budget ("burst")');
    }
    const { logged, booked } = await teamSpend("burst", served.length);
    // Each refusal is logged too: spend 0, reason budget_exceeded (added nothing to `logged`).
    await waitFor("the refusals' spend rows", async () => {
      const [row] = await query<{ n: number }>(
        "SELECT count(*)::int AS n FROM spend_logs WHERE team_id = 'burst' AND reason = 'budget_exceeded' AND spend = 0",
      );
      return row?.n === refused.length;
    });
    const logs = await admin<{ team_id: string | null }[]>("GET", `/spend/logs?api_key=${keys[0]?.token}`);
    expect(logs.body.length).toBeGreaterThan(0);
    expect(logs.body.every((row) => row.team_id === "burst")).toBe(true);
    expect(logged).toBeGreaterThan(0);
    expect(logged).toBeLessThanOrEqual(0.05);
    expect(booked).toBeCloseTo(logged, 10);
    // Every served call is counted under the team's label, on the instance that served it.
    const servedOn = async (gw: TestGateway) =>
      metricValue(gw.gateway.metrics.registry, "litellm_proxy_total_requests_metric_total", {
        team: "burst",
        team_alias: "",
        status_code: "200",
      });
    expect((await servedOn(a)) + (await servedOn(b))).toBe(served.length);
  });

  it("posts its 80 % and exhausted webhook events once each, though both instances book and refuse", async () => {
    await ok("POST", "/team/new", { team_id: "alerts", team_alias: "Alerts", max_budget: 0.05 });
    const [k1, k2] = [await teamKey("alerts"), await teamKey("alerts")];
    let refusal: Awaited<ReturnType<typeof chat>> | undefined;
    // One call at a time, until a refusal by settled spend alone (what records budget_exceeded): a call settles
    // just after its answer, so a refusal that still counts the last call's reservation is tried again.
    for (let i = 0; i < 60 && refusal === undefined; i++) {
      const res = await chat(i % 2 === 0 ? a : b, (i % 4 < 2 ? k1 : k2).key);
      if (res.status === 200) continue;
      if (/reserved by calls in flight/.test(res.body.error?.message)) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      refusal = res;
    }
    expect(refusal?.body.error.type).toBe("budget_exceeded");
    await chat(b, k2.key); // refused again on the other instance: still one event
    const teamEvents = () => hook.bodies.filter((body) => body.team_id === "alerts");
    await waitFor("both team events delivered", async () => teamEvents().length >= 2, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 500)); // a duplicate would arrive by now
    const events = teamEvents().sort((x, y) => Number(x.threshold) - Number(y.threshold));
    expect(events).toEqual([
      expect.objectContaining({
        event: "budget_threshold_reached",
        threshold: 0.8,
        scope: "team",
        event_group: "team",
        team_alias: "Alerts",
        budget: "0.05",
        text: expect.stringMatching(/^Team Alerts: 80% of budget reached/),
      }),
      expect.objectContaining({
        event: "budget_exceeded",
        threshold: 1,
        scope: "team",
        event_group: "team",
        text: expect.stringMatching(/^Team Alerts: budget exhausted/),
      }),
    ]);
  });

  it("binds a member's budget in the team while the rest of the team goes on", async () => {
    await ok("POST", "/team/new", { team_id: "shares", max_budget: 10 });
    await ok("POST", "/team/member_add", {
      team_id: "shares",
      member: { role: "user", user_id: "ann" },
      max_budget_in_team: 0.01,
    });
    await ok("POST", "/team/member_add", { team_id: "shares", member: { role: "user", user_id: "bob" } });
    const ann = await teamKey("shares", "ann");
    const bob = await teamKey("shares", "bob");
    let refusal: Awaited<ReturnType<typeof chat>> | undefined;
    let annServed = 0;
    for (let i = 0; i < 20 && refusal === undefined; i++) {
      const res = await chat(i % 2 === 0 ? a : b, ann.key);
      if (res.status === 200) annServed += 1;
      else refusal = res;
    }
    expect(annServed).toBeGreaterThan(0);
    expect(refusal?.status).toBe(429);
    expect(refusal?.body.error.type).toBe("budget_exceeded");
    expect(refusal?.body.error.message).toContain("Team member budget");
    expect((await chat(a, bob.key)).status).toBe(200);
    expect((await chat(b, bob.key)).status).toBe(200);
    await teamSpend("shares", annServed + 2);
    const [member] = await query<{ spend: string }>(
      "SELECT spend FROM team_memberships WHERE team_id = 'shares' AND user_id = 'ann'",
    );
    expect(Number(member?.spend)).toBeGreaterThan(0);
    expect(Number(member?.spend)).toBeLessThanOrEqual(0.01);
  });

  it("applies instead of the owner's personal budget", async () => {
    await ok("POST", "/user/new", { user_id: "broke", max_budget: 0 });
    await ok("POST", "/team/new", {
      team_id: "payer",
      max_budget: 5,
      members_with_roles: [{ user_id: "broke" }],
    });
    const personal = await ok<{ key: string }>("POST", "/key/generate", { user_id: "broke" });
    const team = await teamKey("payer", "broke");
    const mine = await chat(a, personal.key);
    expect(mine.status).toBe(429);
    expect(mine.body.error.message).toContain("User budget");
    expect((await chat(a, team.key)).status).toBe(200);
    await teamSpend("payer", 1);
    const [user] = await query<{ spend: string }>("SELECT spend FROM users WHERE user_id = 'broke'");
    expect(Number(user?.spend)).toBe(0);
  });
});

describe("team rate limits", () => {
  it("shares the team's rpm_limit among its keys across instances", async () => {
    await ok("POST", "/team/new", { team_id: "rpm", rpm_limit: 3 });
    const [k1, k2] = [await teamKey("rpm"), await teamKey("rpm")];
    // The window is the epoch minute: start well inside one, so that all four calls fall in the same window.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
    const results = await Promise.all([chat(a, k1.key), chat(b, k2.key), chat(a, k2.key), chat(b, k1.key)]);
    const refused = results.filter((r) => r.status === 429);
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    expect(refused).toHaveLength(1);
    expect(refused[0]?.body.error.type).toBe("rate_limit_error");
    expect(refused[0]?.body.error.message).toContain('team "rpm" allows 3 requests per minute');
  });
});

describe("team models", () => {
  it("bind the team's keys and the fallbacks of their route plan", async () => {
    await ok("POST", "/team/new", { team_id: "narrow", models: ["flaky", "general"] });
    const { key } = await teamKey("narrow");
    const denied = await chat(a, key, "premium");
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain("team");
    const before = premium.completions;
    // flaky always fails; its fallback premium is outside the team's models, so it is never tried.
    const failed = await chat(a, key, "flaky");
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(premium.completions).toBe(before);
    // The master key may use the fallback: the plan would have reached premium without the team's models.
    const master = await chat(a, "sk-test-master-key-0123456789", "flaky");
    expect(master.status).toBe(200);
    expect(premium.completions).toBe(before + 1);
  });
});

describe("a blocked team", () => {
  it("is refused on every instance once blocked on one, and served again once unblocked", async () => {
    await ok("POST", "/team/new", { team_id: "blockme" });
    const { key } = await teamKey("blockme");
    expect((await chat(b, key)).status).toBe(200); // cached on b
    await ok("POST", "/team/block", { team_id: "blockme" });
    await waitFor(
      "b to refuse the blocked team's key",
      async () => (await chat(b, key)).status === 401,
      2000,
    );
    const refused = await chat(b, key);
    expect(refused.body.error.code).toBe("team_blocked");
    expect((await chat(a, key)).status).toBe(401);
    await ok("POST", "/team/unblock", { team_id: "blockme" });
    await waitFor(
      "b to serve the unblocked team's key",
      async () => (await chat(b, key)).status === 200,
      2000,
    );
  });
});
