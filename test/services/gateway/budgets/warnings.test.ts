import { describe, expect, it } from "vitest";
import { createPool } from "../../../../services/gateway/src/db/pool.js";
import { writeSpendBatch } from "../../../../services/gateway/src/spend/write.js";
import { databasePerTest } from "../../../helpers/postgres.js";
import { adminApp, call, openStore, recordingLogger, spendRow } from "../store/harness.js";

const { cleanups, database, sqlClient } = databasePerTest();

async function setup() {
  const db = await database();
  const opened = await openStore(db.url);
  const app = await adminApp(opened);
  const pool = createPool(db.url, recordingLogger());
  cleanups.push(
    () => opened.store.close(),
    () => app.close(),
    () => pool.end(),
  );
  await call(app, "POST", "/user/new", { user_id: "ann", max_budget: 10, budget_duration: "30d" });
  const key = await call(app, "POST", "/key/generate", {
    user_id: "ann",
    key_alias: "ann-app",
    max_budget: 1,
  });
  const events = async () =>
    (
      await (
        await sqlClient(db)
      ).query(
        "SELECT scope, scope_id, threshold::float8 AS threshold, payload FROM budget_events ORDER BY scope, threshold",
      )
    ).rows;
  return { app, pool, clock: opened.clock, token: key.body.token as string, events };
}

describe("budget events (80 % and 100 %) recorded by the spend writer", () => {
  it("records one event when settled spend crosses 80 % of the key's budget, none below it", async () => {
    const { pool, clock, token, events } = await setup();
    const row = (spend: number) => spendRow({ keyHash: token, userId: "ann", keyAlias: "ann-app", spend });
    await writeSpendBatch(pool, [row(0.3), row(0.3)], clock.now());
    expect(await events()).toEqual([]);
    await writeSpendBatch(pool, [row(0.1), row(0.1)], clock.now());
    await writeSpendBatch(pool, [row(0.1)], clock.now());
    const recorded = await events();
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ scope: "key", scope_id: token, threshold: 0.8 });
    expect(recorded[0].payload).toMatchObject({
      event: "budget_threshold_reached",
      threshold: 0.8,
      user: "ann",
      key_alias: "ann-app",
      budget: "1",
      spend: "0.8",
    });
  });

  it("concurrent batches from several writers produce exactly one event per budget", async () => {
    const { pool, clock, token, events } = await setup();
    const batches = Array.from({ length: 8 }, () =>
      writeSpendBatch(pool, [spendRow({ keyHash: token, userId: "ann", spend: 1.1 })], clock.now()),
    );
    await Promise.all(batches);
    const recorded = await events();
    // 8.8 USD: the key (1 USD) crossed 80 % and 100 % once each; the user (10 USD, 80 % = 8) crossed 80 %.
    expect(recorded.map((e) => [e.scope, e.threshold])).toEqual([
      ["key", 0.8],
      ["key", 1],
      ["user", 0.8],
    ]);
    expect(recorded[2].payload).toMatchObject({ scope: "user", user: "ann", key_alias: null, budget: "10" });
    expect(recorded[2].payload.period_end).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it("records budget_exceeded once when settled spend reaches the budget, in the batch that reaches it", async () => {
    const { pool, clock, token, events } = await setup();
    const row = (spend: number) => spendRow({ keyHash: token, userId: "ann", keyAlias: "ann-app", spend });
    await writeSpendBatch(pool, [row(0.85)], clock.now());
    expect((await events()).map((e) => e.threshold)).toEqual([0.8]);
    await writeSpendBatch(pool, [row(0.1)], clock.now());
    expect((await events()).map((e) => e.threshold)).toEqual([0.8]); // 0.95 < 1
    await writeSpendBatch(pool, [row(0.05)], clock.now()); // exactly 1: used up
    await writeSpendBatch(pool, [row(0.5)], clock.now());
    const recorded = await events();
    expect(recorded.map((e) => [e.scope, e.threshold])).toEqual([
      ["key", 0.8],
      ["key", 1],
    ]);
    expect(recorded[1].payload).toEqual({
      event: "budget_exceeded",
      threshold: 1,
      scope: "key",
      event_group: "key",
      user: "ann",
      key_alias: "ann-app",
      team_id: null,
      team_alias: null,
      budget: "1",
      spend: "1.00",
      period_end: null,
    });
  });

  it("records both events from one batch that jumps past the whole budget", async () => {
    const { pool, clock, token, events } = await setup();
    await writeSpendBatch(pool, [spendRow({ keyHash: token, userId: "ann", spend: 1.4 })], clock.now());
    const recorded = await events();
    expect(recorded.map((e) => [e.scope, e.threshold, e.payload.event, e.payload.spend])).toEqual([
      ["key", 0.8, "budget_threshold_reached", "1.4"],
      ["key", 1, "budget_exceeded", "1.4"],
    ]);
  });

  it("records a team's events (event_group team, its id and alias), and names the team of a team key's events", async () => {
    const { app, pool, clock, events } = await setup();
    await call(app, "POST", "/team/new", {
      team_id: "search",
      team_alias: "Search",
      max_budget: 1,
      members_with_roles: [{ role: "user", user_id: "ann" }],
    });
    await call(app, "POST", "/team/member_update", {
      team_id: "search",
      user_id: "ann",
      max_budget_in_team: 0.1,
    });
    const teamKey = await call(app, "POST", "/key/generate", {
      team_id: "search",
      user_id: "ann",
      max_budget: 2,
    });
    const token = teamKey.body.token as string;
    const row = (spend: number) => spendRow({ keyHash: token, userId: "ann", teamId: "search", spend });
    await writeSpendBatch(pool, [row(0.5), row(0.35)], clock.now());
    const recorded = await events();
    // The team's 80 %; the key is at 42 % of its own budget; the member's 0.1 in the team records nothing, and
    // a team key's spend is not the user's (ann's personal budget of 10 saw none of it).
    expect(recorded.map((e) => [e.scope, e.scope_id, e.threshold])).toEqual([["team", "search", 0.8]]);
    expect(recorded[0].payload).toEqual({
      event: "budget_threshold_reached",
      threshold: 0.8,
      scope: "team",
      event_group: "team",
      user: null,
      key_alias: null,
      team_id: "search",
      team_alias: "Search",
      budget: "1",
      spend: "0.85",
      period_end: null,
    });
    await writeSpendBatch(pool, [row(0.8)], clock.now());
    const keyEvent = (await events()).find((e) => e.scope === "key");
    expect(keyEvent?.payload).toMatchObject({ event_group: "key", team_id: "search", team_alias: "Search" });
  });
});
