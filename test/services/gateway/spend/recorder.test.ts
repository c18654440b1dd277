import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createPool } from "../../../../services/gateway/src/db/pool.js";
import { writeSpendBatch } from "../../../../services/gateway/src/spend/write.js";
import { metricValue } from "../../../helpers/metrics.js";
import { databasePerTest } from "../../../helpers/postgres.js";
import { adminApp, call, openStore, recordingLogger, spendRow } from "../store/harness.js";

const { cleanups, database, proxyTo, sqlClient } = databasePerTest();

async function instance(url: string, options: Parameters<typeof openStore>[1] = {}) {
  const registry = new Registry();
  const opened = await openStore(url, { registry, ...options });
  const app = await adminApp(opened);
  cleanups.push(
    () => opened.store.close(),
    () => app.close(),
  );
  return { ...opened, app, registry };
}

async function keysFor(app: Awaited<ReturnType<typeof instance>>["app"], userId: string, count: number) {
  await call(app, "POST", "/user/new", { user_id: userId, max_budget: null });
  const tokens: string[] = [];
  for (let i = 0; i < count; i += 1) {
    tokens.push((await call(app, "POST", "/key/generate", { user_id: userId })).body.token);
  }
  return tokens;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("spend batches", () => {
  it("are idempotent by request_id: a retried batch neither duplicates rows nor counts twice", async () => {
    const db = await database();
    const { app, clock } = await instance(db.url);
    const [token] = await keysFor(app, "idem", 1);
    const pool = createPool(db.url, recordingLogger());
    cleanups.push(() => pool.end());
    const rows = [1, 2, 3].map(() => spendRow({ keyHash: token ?? null, userId: "idem", spend: 0.1 }));
    expect(await writeSpendBatch(pool, rows, clock.now())).toBe(3);
    expect(await writeSpendBatch(pool, [...rows, rows[0]!], clock.now())).toBe(0);
    const check = await sqlClient(db);
    expect((await check.query("SELECT count(*)::int AS n FROM spend_logs")).rows[0].n).toBe(3);
    expect((await check.query("SELECT spend FROM keys")).rows[0].spend).toBe("0.3");
    expect((await check.query("SELECT spend FROM users WHERE user_id = 'idem'")).rows[0].spend).toBe("0.3");
  });

  it("store each row's usage breakdown in usage_details (NULL without one), whatever the batch's order", async () => {
    const db = await database();
    await instance(db.url); // migrates the database
    const pool = createPool(db.url, recordingLogger());
    cleanups.push(() => pool.end());
    const details = (cacheRead: number) => ({
      input: 100,
      input_audio: 0,
      cache_read: cacheRead,
      cache_write_5m: 10,
      cache_write_1h: 5,
      output: 7,
      output_reasoning: 3,
      output_audio: 0,
      accepted_prediction: 0,
      rejected_prediction: 0,
      web_search_requests: 1,
    });
    const rows = [
      spendRow({ usageDetails: details(800) }),
      spendRow(),
      spendRow({ usageDetails: details(1) }),
    ];
    expect(await writeSpendBatch(pool, rows, Date.now())).toBe(3);
    const check = await sqlClient(db);
    const stored = await check.query("SELECT request_id, usage_details FROM spend_logs");
    const byId = new Map(stored.rows.map((r) => [r.request_id, r.usage_details]));
    expect(byId.get(rows[0]!.requestId)).toEqual(details(800));
    expect(byId.get(rows[1]!.requestId)).toBeNull();
    expect(byId.get(rows[2]!.requestId)).toEqual(details(1));
  });

  it("store every column as recorded: times to the millisecond, tiny and large costs exactly, flags and sanitised numbers", async () => {
    const db = await database();
    await instance(db.url); // migrates the database
    const pool = createPool(db.url, recordingLogger());
    cleanups.push(() => pool.end());
    const start = Date.UTC(2026, 2, 3, 4, 5, 6, 789);
    const rows = [
      spendRow({ spend: 1.2e-7, startTime: start, endTime: start + 1, stream: true, status: 200 }),
      spendRow({
        spend: 123456.789012,
        promptTokens: 2_000_000,
        completionTokens: 7,
        totalTokens: 2_000_007,
      }),
      spendRow({
        spend: Number.NaN,
        promptTokens: -3,
        completionTokens: 2.6,
        startTime: Number.NaN,
        status: 1.5,
      }),
      spendRow({ keyAlias: 'a "quoted", {braced} \\ alias', userId: "NULL", callType: "aembedding" }),
    ];
    const now = Date.UTC(2026, 5, 1, 0, 0, 0, 1);
    expect(await writeSpendBatch(pool, rows, now)).toBe(4);
    const check = await sqlClient(db);
    const stored = await check.query(
      `SELECT request_id, spend::text AS spend, prompt_tokens, completion_tokens, status, stream, call_type, key_alias,
              user_id, (extract(epoch FROM start_time) * 1000)::bigint::text AS start_ms,
              (extract(epoch FROM end_time) * 1000)::bigint::text AS end_ms
       FROM spend_logs`,
    );
    const byId = new Map(stored.rows.map((r) => [r.request_id, r]));
    const [tiny, large, malformed, quoted] = rows.map((r) => byId.get(r.requestId));
    expect(tiny).toMatchObject({
      spend: "0.00000012",
      stream: true,
      start_ms: String(start),
      end_ms: String(start + 1),
    });
    expect(large).toMatchObject({ spend: "123456.789012", prompt_tokens: 2_000_000, stream: false });
    expect(malformed).toMatchObject({
      spend: "0",
      prompt_tokens: 0,
      completion_tokens: 3,
      status: 0,
      start_ms: String(now),
    });
    expect(quoted).toMatchObject({
      key_alias: 'a "quoted", {braced} \\ alias',
      user_id: "NULL",
      call_type: "aembedding",
    });
  });

  it("two instances writing the same keys in opposite orders neither deadlock nor lose spend", async () => {
    const db = await database();
    const a = await instance(db.url);
    const b = await instance(db.url);
    const tokens = await keysFor(a.app, "busy", 6);
    const reversed = [...tokens].reverse();
    for (let round = 0; round < 20; round += 1) {
      for (const [store, order] of [
        [a.store, tokens],
        [b.store, reversed],
      ] as const) {
        for (const token of order)
          store.spend.record(spendRow({ keyHash: token, userId: "busy", spend: 0.01 }));
      }
      await Promise.all([a.store.spend.flush(), b.store.spend.flush()]);
    }
    expect(await metricValue(a.registry, "litellm_spend_flush_failures_total")).toBe(0);
    expect(await metricValue(b.registry, "litellm_spend_flush_failures_total")).toBe(0);
    const check = await sqlClient(db);
    const perKey = await check.query("SELECT spend FROM keys");
    for (const row of perKey.rows) expect(row.spend).toBe("0.40");
    expect((await check.query("SELECT spend FROM users WHERE user_id = 'busy'")).rows[0].spend).toBe("2.40");
  });

  it("flushes on close", async () => {
    const db = await database();
    const { store } = await openStore(db.url, { flushIntervalMs: 60_000 });
    for (let i = 0; i < 5; i += 1) store.spend.record(spendRow());
    await store.close();
    const check = await sqlClient(db);
    expect((await check.query("SELECT count(*)::int AS n FROM spend_logs")).rows[0].n).toBe(5);
  });
});

describe("Postgres cut mid-run", () => {
  it("loses no spend row, gets totals right, and keeps authenticating known keys", async () => {
    const db = await database();
    const proxy = await proxyTo(db);
    const { store, app, registry } = await instance(db.urlVia(proxy.port), {
      flushIntervalMs: 50,
      keyCache: { refreshAfterMs: 50, maxStaleMs: 100, outageBackoffMs: 100 },
    });
    await call(app, "POST", "/user/new", { user_id: "cut", max_budget: null });
    const made = await call(app, "POST", "/key/generate", { user_id: "cut" });
    const { key, token } = made.body;
    expect((await store.keys.authenticate(key))?.keyHash).toBe(token);

    let recorded = 0;
    const recordSome = async (n: number) => {
      for (let i = 0; i < n; i += 1) {
        store.spend.record(
          spendRow({ keyHash: token, userId: "cut", spend: 0.001, requestId: `cut-${recorded}` }),
        );
        recorded += 1;
        await sleep(5);
      }
    };
    await recordSome(40);
    proxy.cut();
    await recordSome(100);
    expect((await store.keys.authenticate(key))?.keyHash).toBe(token);
    await sleep(300);
    expect((await store.keys.authenticate(key))?.keyHash).toBe(token);
    expect(await metricValue(registry, "litellm_spend_flush_failures_total")).toBeGreaterThan(0);
    expect(await metricValue(registry, "litellm_spend_buffer_rows")).toBeGreaterThan(0);
    proxy.restore();
    await recordSome(40);
    await store.spend.flush(10_000);

    expect(await metricValue(registry, "litellm_spend_buffer_rows")).toBe(0);
    const check = await sqlClient(db);
    const logs = await check.query("SELECT count(*)::int AS n, sum(spend)::text AS total FROM spend_logs");
    expect(logs.rows[0]).toEqual({ n: 180, total: "0.180" });
    expect((await check.query("SELECT spend::text FROM keys WHERE token = $1", [token])).rows[0].spend).toBe(
      "0.180",
    );
    expect((await check.query("SELECT spend::text FROM users WHERE user_id = 'cut'")).rows[0].spend).toBe(
      "0.180",
    );
  });

  it("drops rows past the buffer bound and counts them", async () => {
    const db = await database();
    const proxy = await proxyTo(db);
    const { store, registry, log } = await instance(db.urlVia(proxy.port), {
      maxBufferedSpendRows: 5,
      flushIntervalMs: 60_000,
    });
    proxy.cut();
    for (let i = 0; i < 8; i += 1) store.spend.record(spendRow());
    expect(await metricValue(registry, "litellm_spend_rows_dropped_total")).toBe(3);
    expect(await metricValue(registry, "litellm_spend_buffer_rows")).toBe(5);
    expect(log.lines.filter((l) => l.includes("spend queue full"))).toHaveLength(1);
    proxy.restore();
    await store.spend.flush(10_000);
    const check = await sqlClient(db);
    expect((await check.query("SELECT count(*)::int AS n FROM spend_logs")).rows[0].n).toBe(5);
  });
});
