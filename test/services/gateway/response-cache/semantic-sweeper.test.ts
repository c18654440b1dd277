/**
 * The semantic cache's sweeper of expired rows (`response-cache/semantic/sweeper.ts`, migration 16) on PGlite's
 * pgvector (the machine's Postgres has none): a pass deletes expired rows of every filter key and keeps live
 * ones, deletes at most `batchRows` × `batchesPerPass` rows (oldest first), reads them through the `expires_at`
 * index, runs every `everyMs` until stopped, and a failing pass is logged without stopping the next ones.
 * `semantic-sweeper-pg.test.ts` has the several-instances case on the machine's Postgres.
 */
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import type pg from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  SEMANTIC_CACHE_EXPIRY_INDEX_SQL,
  SEMANTIC_CACHE_TABLE_SQL,
} from "../../../../services/gateway/src/db/migrations.js";
import { semanticSweptRowsCounter } from "../../../../services/gateway/src/response-cache/metrics.js";
import {
  SemanticCacheSweeper,
  SWEEP_BATCH_SQL,
} from "../../../../services/gateway/src/response-cache/semantic/sweeper.js";
import { metricValue } from "../../../helpers/metrics.js";
import { captureLogger, waitFor } from "../../../helpers/redis.js";

const SLOW = { timeout: 120_000 };
const SWEPT = "gateway_cache_semantic_swept_rows_total";

let db: PGlite;

beforeAll(async () => {
  db = await PGlite.create({ extensions: { vector } });
  await db.exec(SEMANTIC_CACHE_TABLE_SQL);
  await db.exec(SEMANTIC_CACHE_EXPIRY_INDEX_SQL);
}, SLOW.timeout);
afterAll(async () => {
  await db?.close();
});
beforeEach(async () => {
  await db.exec("DELETE FROM semantic_cache_entries");
});

/** Inserts `count` rows of filter key `key` expiring `seconds` from now (negative: expired), 1 s apart. */
async function insert(key: string, count: number, seconds: number): Promise<void> {
  await db.query(
    `INSERT INTO semantic_cache_entries (filter_key, scope, embedding, entry, expires_at)
     SELECT repeat($1, 64), 'team:t', '[1,0,0]'::vector, '{}'::jsonb, now() + make_interval(secs => $2 + i)
       FROM generate_series(1, $3::int) AS i`,
    [key, seconds, count],
  );
}

const rows = async () =>
  (
    await db.query<{ filter_key: string; live: boolean }>(
      "SELECT filter_key, expires_at > now() AS live FROM semantic_cache_entries ORDER BY expires_at",
    )
  ).rows;

/** A sweeper on the PGlite database (its `query(text, params)` answers `{rows, rowCount}` as pg's pool does). */
const sweeper = (options: { batchRows?: number; batchesPerPass?: number; everyMs?: number } = {}) => {
  const registry = new Registry();
  const log = captureLogger();
  const sweep = new SemanticCacheSweeper({
    pool: db as unknown as pg.Pool,
    log,
    swept: semanticSweptRowsCounter(registry),
    ...options,
  });
  return { sweep, registry, log };
};

describe("the semantic cache's sweeper", SLOW, () => {
  it("deletes the expired rows of every filter key and keeps the live ones, counting them", async () => {
    await insert("a", 4, -600);
    await insert("b", 3, -600);
    await insert("a", 2, 600);
    await insert("c", 1, 600);
    const { sweep, registry } = sweeper();
    expect(await sweep.sweep()).toBe(7);
    const left = await rows();
    expect(left).toHaveLength(3);
    expect(left.every((r) => r.live)).toBe(true);
    expect(await metricValue(registry, SWEPT)).toBe(7);
    expect(await sweep.sweep()).toBe(0);
  });

  it("deletes at most batchRows × batchesPerPass rows a pass, oldest first", async () => {
    await insert("a", 25, -3600);
    await insert("a", 1, 600);
    const { sweep, registry } = sweeper({ batchRows: 10, batchesPerPass: 2 });
    expect(await sweep.sweep()).toBe(20);
    const left = await rows();
    expect(left).toHaveLength(6);
    // The five left expired are the last to expire of the 25 (expires_at now − 3600 + 21 … 25 s).
    const { rows: times } = await db.query<{ s: number }>(
      "SELECT round(extract(epoch FROM expires_at - now()))::int AS s FROM semantic_cache_entries WHERE expires_at <= now() ORDER BY 1",
    );
    expect(times.map((t) => t.s)).toEqual([-3579, -3578, -3577, -3576, -3575]);
    expect(await sweep.sweep()).toBe(5);
    expect(await metricValue(registry, SWEPT)).toBe(25);
    expect((await rows()).every((r) => r.live)).toBe(true);
  });

  it("reads the expired rows through the expires_at index (migration 16)", async () => {
    await insert("a", 2000, 600);
    await insert("b", 5, -600);
    await db.exec("ANALYZE semantic_cache_entries");
    const plan = await db.query<{ "QUERY PLAN": string }>(`EXPLAIN ${SWEEP_BATCH_SQL.replace("$1", "1000")}`);
    expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("semantic_cache_entries_expires_idx");
  });

  it("sweeps every everyMs once started, and not after stop()", async () => {
    const { sweep } = sweeper({ everyMs: 20 });
    sweep.start();
    await insert("a", 3, -60);
    await waitFor("the first pass", async () => (await rows()).length === 0);
    await insert("b", 2, -60);
    await waitFor("a later pass", async () => (await rows()).length === 0);
    await sweep.stop();
    await insert("c", 2, -60);
    // Ten intervals without a pass: stop() cancelled the next one.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await rows()).toHaveLength(2);
  });

  it("logs a failing pass and sweeps again at the next interval", async () => {
    const { sweep, log } = sweeper({ everyMs: 20 });
    await db.exec("ALTER TABLE semantic_cache_entries RENAME TO semantic_cache_entries_away");
    try {
      sweep.start();
      await waitFor("a logged failure", () => log.lines.some((l) => l.level === "warn"));
    } finally {
      await db.exec("ALTER TABLE semantic_cache_entries_away RENAME TO semantic_cache_entries");
    }
    const warning = log.lines.find((l) => l.level === "warn");
    expect(warning?.msg).toBe("semantic cache: sweeping expired rows failed");
    expect(warning?.text).toContain("semantic_cache_entries");
    await insert("a", 2, -60);
    await waitFor("a pass after the failure", async () => (await rows()).length === 0);
    await sweep.stop();
  });
});
