import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createPool } from "../../../../services/gateway/src/db/pool.js";
import { BatchingSpendRecorder } from "../../../../services/gateway/src/spend/recorder.js";
import { SpendWriterThread } from "../../../../services/gateway/src/spend/thread-writer.js";
import { metricValue } from "../../../helpers/metrics.js";
import { databasePerTest } from "../../../helpers/postgres.js";
import { adminApp, call, openStore, recordingLogger, spendRow } from "../store/harness.js";

const { cleanups, database, sqlClient } = databasePerTest();

/** A migrated database with one user and key, and a recorder writing through its own writer thread. */
async function threadedRecorder() {
  const db = await database();
  const opened = await openStore(db.url);
  const app = await adminApp(opened);
  cleanups.push(
    () => opened.store.close(),
    () => app.close(),
  );
  await call(app, "POST", "/user/new", { user_id: "t", max_budget: null });
  const token: string = (await call(app, "POST", "/key/generate", { user_id: "t" })).body.token;
  const log = recordingLogger();
  const pool = createPool(db.url, log);
  const thread = new SpendWriterThread(db.url, log);
  const registry = new Registry();
  const recorder = new BatchingSpendRecorder({
    pool,
    clock: opened.clock,
    log,
    registry,
    flushIntervalMs: 60_000,
    initialBackoffMs: 20,
    maxBackoffMs: 50,
    write: (rows, now) => thread.write(rows, now),
  });
  cleanups.push(
    () => pool.end(),
    () => thread.close(),
  );
  return { db, token, thread, recorder, registry, log };
}

describe("spend writer thread", () => {
  it("dying mid-write loses no row: the batch is kept, retried on a new thread and counted once", async () => {
    const { db, token, thread, recorder, registry } = await threadedRecorder();
    const check = await sqlClient(db);
    await check.query("BEGIN");
    await check.query("LOCK TABLE spend_logs IN EXCLUSIVE MODE"); // the thread's INSERT waits on it
    for (let i = 0; i < 10; i++) recorder.record(spendRow({ keyHash: token, userId: "t", spend: 0.01 }));
    const first = recorder.flush(60_000);
    const waiting =
      "SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'spend_logs'::regclass";
    await expect.poll(async () => (await check.query(waiting)).rows[0].n, { timeout: 10_000 }).toBe(1);

    await thread.terminate();
    await expect.poll(() => metricValue(registry, "litellm_spend_flush_failures_total")).toBe(1);
    expect(recorder.pending).toBe(10);

    await check.query("COMMIT");
    await first;
    expect(recorder.pending).toBe(0);
    expect((await check.query("SELECT count(*)::int AS n FROM spend_logs")).rows[0].n).toBe(10);
    expect((await check.query("SELECT spend::text FROM keys")).rows[0].spend).toBe("0.10");
    expect((await check.query("SELECT spend::text FROM users WHERE user_id = 't'")).rows[0].spend).toBe(
      "0.10",
    );
  });

  it("passes odd values through unchanged, and a row the database refuses (a NUL byte) is dropped alone", async () => {
    const { db, recorder, registry, log } = await threadedRecorder();
    const details = { input: 7, output: 3, cache_read: 0, note: 'q"uote\\ {x}' };
    const odd = [
      spendRow({
        keyAlias: 'a "quoted", {braced} \\ alias\ttab\nline',
        userId: "NULL",
        usageDetails: details as never,
      }),
      spendRow({ keyAlias: "ünïcödé 模型 🚀 e\u0301", modelGroup: "\u2028sep", deploymentId: null }),
      spendRow({ keyAlias: null, teamId: undefined, reason: null, cacheKey: "", callType: undefined }),
    ];
    const refused = spendRow({ keyAlias: "nul\u0000byte" });
    for (const row of [odd[0]!, refused, odd[1]!, odd[2]!]) recorder.record(row);
    await recorder.flush(10_000);

    expect(recorder.pending).toBe(0);
    expect(await metricValue(registry, "litellm_spend_rows_dropped_total")).toBe(1);
    expect(await metricValue(registry, "litellm_spend_flush_failures_total")).toBe(0);
    expect(log.lines.some((l) => l.includes(refused.requestId) && l.includes("refused"))).toBe(true);
    const check = await sqlClient(db);
    const stored = await check.query(
      "SELECT request_id, key_alias, user_id, model_group, deployment_id, usage_details, team_id, reason, cache_key, call_type FROM spend_logs",
    );
    const byId = new Map(stored.rows.map((r) => [r.request_id, r]));
    expect(byId.size).toBe(3);
    expect(byId.get(odd[0]!.requestId)).toMatchObject({
      key_alias: 'a "quoted", {braced} \\ alias\ttab\nline',
      user_id: "NULL",
      usage_details: details,
    });
    expect(byId.get(odd[1]!.requestId)).toMatchObject({
      key_alias: "ünïcödé 模型 🚀 e\u0301",
      model_group: "\u2028sep",
      deployment_id: null,
    });
    expect(byId.get(odd[2]!.requestId)).toMatchObject({
      key_alias: null,
      team_id: null,
      reason: null,
      cache_key: "",
      call_type: "acompletion",
      usage_details: null,
    });
  });
});
