/**
 * Spend by team: `/spend/logs?team_id=`, `/spend/usage?team_id=` and LiteLLM's `/global/spend/teams` report, over
 * rows booked through the store's spend recorder into Postgres.
 */
import { globalSpendTeamsResponse, spendLogsResponse } from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../../../../services/gateway/src/store/index.js";
import { adminAppOnFreshDatabase, call, type ManualClock, spendRow } from "../../store/harness.js";

const DAY = 86_400_000;

let store: Store;
let clock: ManualClock;
let app: FastifyInstance;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ store, clock, app, close } = await adminAppOnFreshDatabase());
  await call(app, "POST", "/team/new", { team_id: "search", team_alias: "Search" });
  await call(app, "POST", "/team/new", { team_id: "ops" });
  const now = clock.now();
  const at = (daysAgo: number) => ({ startTime: now - daysAgo * DAY, endTime: now - daysAgo * DAY + 100 });
  for (const row of [
    spendRow({ teamId: "search", spend: 0.5, ...at(0) }),
    spendRow({ teamId: "search", spend: 0.25, ...at(1) }),
    spendRow({ teamId: "ops", spend: 1, ...at(1) }),
    spendRow({ teamId: "ops", spend: 9, ...at(45) }), // before the report's 30 days
    spendRow({ spend: 0.125, ...at(0) }), // a key without a team
  ]) {
    store.spend.record(row);
  }
  await store.spend.flush();
});

afterAll(async () => {
  await close?.();
});

describe("spend by team", () => {
  it("/spend/logs?team_id= lists only the calls of that team's keys", async () => {
    const res = await call(app, "GET", "/spend/logs?team_id=search");
    expect(res.status).toBe(200);
    const rows = spendLogsResponse.parse(res.body);
    expect(rows.map((r) => [r.team_id, r.spend])).toEqual([
      ["search", 0.5],
      ["search", 0.25],
    ]);
    expect((await call(app, "GET", "/spend/logs?team_id=nobody")).body).toEqual([]);
  });

  it("/spend/usage?team_id= sums the team's calls; naming two scopes is a 400", async () => {
    const usage = await call(app, "GET", "/spend/usage?team_id=ops&days=90");
    expect(usage.status).toBe(200);
    expect(usage.body.totals).toMatchObject({ spend: 10, requests: 2 });
    const both = await call(app, "GET", "/spend/usage?team_id=ops&user_id=ann");
    expect(both.status).toBe(400);
    expect(both.body.error.message).toContain("team_id");
  });

  it("/global/spend/teams answers LiteLLM's report of the last 30 days, keys without a team as Unassigned", async () => {
    const res = await call(app, "GET", "/global/spend/teams");
    expect(res.status).toBe(200);
    const report = globalSpendTeamsResponse.parse(res.body);
    expect(report.total_spend_per_team).toEqual([
      { team_id: "ops", team_alias: null, total_spend: 1 },
      { team_id: "search", team_alias: "Search", total_spend: 0.75 },
      { team_id: null, team_alias: null, total_spend: 0.125 },
    ]);
    expect([...report.teams].sort()).toEqual(["Search", "Unassigned", "ops"]);
    const today = new Date(clock.now()).toISOString().slice(0, 10);
    const yesterday = new Date(clock.now() - DAY).toISOString().slice(0, 10);
    expect(report.daily_spend).toEqual([
      { date: yesterday, Search: 0.25, ops: 1 },
      { date: today, Search: 0.5, Unassigned: 0.125 },
    ]);
  });
});
