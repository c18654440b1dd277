import { describe, expect, it } from "vitest";
import { sendDueBudgetEvents, startBudgetSender } from "../../../../services/gateway/src/budgets/sender.js";
import { createPool } from "../../../../services/gateway/src/db/pool.js";
import { writeSpendBatch } from "../../../../services/gateway/src/spend/write.js";
import { startFakeSlackWebhook } from "../../../fixtures/slack-webhook.js";
import { databasePerTest } from "../../../helpers/postgres.js";
import { adminApp, call, openStore, recordingLogger, spendRow } from "../store/harness.js";

const { cleanups, database, sqlClient } = databasePerTest();

/** The Slack webhook fake, failing its first `failFirst` posts with 500, closed after the test. */
async function receiver(failFirst: number) {
  const hook = await startFakeSlackWebhook();
  hook.failNext(failFirst);
  cleanups.push(() => hook.close());
  return hook;
}

describe("budget webhook sender", () => {
  it("retries a failed delivery with backoff; two senders deliver each event exactly once", async () => {
    const db = await database();
    const opened = await openStore(db.url);
    const app = await adminApp(opened);
    const pool = createPool(db.url, recordingLogger());
    cleanups.push(
      () => opened.store.close(),
      () => app.close(),
      () => pool.end(),
    );
    await call(app, "POST", "/user/new", { user_id: "bo", max_budget: null });
    const key = await call(app, "POST", "/key/generate", {
      user_id: "bo",
      key_alias: "bo-app",
      max_budget: 1,
    });
    await writeSpendBatch(
      pool,
      [spendRow({ keyHash: key.body.token, userId: "bo", spend: 0.9 })],
      opened.clock.now(),
    );

    const hook = await receiver(1);
    const log = recordingLogger();
    const options = { pool, url: hook.url, log, initialBackoffMs: 60_000 };
    const both = () => Promise.all([sendDueBudgetEvents(options), sendDueBudgetEvents(options)]);
    const sql = await sqlClient(db);
    const row = async () =>
      (
        await sql.query(
          `SELECT attempts, last_error, delivered_at,
             extract(epoch FROM next_attempt_at - now())::float8 AS wait_s FROM budget_events`,
        )
      ).rows[0];
    expect(await both()).toEqual([0, 0]); // first post refused, the other sender skipped the locked row
    const failed = await row();
    expect(failed).toMatchObject({ attempts: 1, last_error: "HTTP 500", delivered_at: null });
    expect(failed.wait_s).toBeGreaterThan(50); // the next attempt waits initialBackoffMs (60 s)
    expect(failed.wait_s).toBeLessThanOrEqual(60);
    expect(await both()).toEqual([0, 0]); // backing off: not due
    await sql.query("UPDATE budget_events SET next_attempt_at = now()"); // the backoff has passed
    expect((await both()).reduce((a, b) => a + b)).toBe(1);
    expect(await both()).toEqual([0, 0]);
    expect(await row()).toMatchObject({ attempts: 2, last_error: null, delivered_at: expect.any(Date) });
    expect(hook.posts()).toBe(2);
    expect(hook.bodies).toEqual([
      expect.objectContaining({
        event: "budget_threshold_reached",
        threshold: 0.8,
        key_alias: "bo-app",
        user: "bo",
        budget: "1",
        spend: "0.9",
        text: "Key bo-app: 80% of budget reached — spent $0.9 of $1",
      }),
    ]);
    expect(log.lines.join("\n")).not.toContain(hook.url);
  });

  it("startBudgetSender delivers recorded events on its own timer and stops cleanly", async () => {
    const db = await database();
    const opened = await openStore(db.url);
    const app = await adminApp(opened);
    const pool = createPool(db.url, recordingLogger());
    cleanups.push(
      () => opened.store.close(),
      () => app.close(),
      () => pool.end(),
    );
    await call(app, "POST", "/user/new", { user_id: "cy", max_budget: null });
    const key = await call(app, "POST", "/key/generate", { user_id: "cy", max_budget: 2 });
    await writeSpendBatch(
      pool,
      [spendRow({ keyHash: key.body.token, userId: "cy", spend: 1.7 })],
      opened.clock.now(),
    );
    const hook = await receiver(0);
    const stop = startBudgetSender({ pool, url: hook.url, log: recordingLogger(), intervalMs: 50 });
    for (let i = 0; i < 100 && hook.bodies.length === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    await stop();
    expect(hook.bodies).toEqual([expect.objectContaining({ threshold: 0.8, spend: "1.7", key_alias: null })]);
  });
});
