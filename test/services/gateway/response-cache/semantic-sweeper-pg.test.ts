/**
 * The semantic cache's sweeper with several gateway instances, on the machine's Postgres (two pools, two
 * connections): a batch skips the rows another instance's batch holds instead of waiting for them, and two
 * instances sweeping at once delete each expired row once. That Postgres has no pgvector, so the table here has
 * only the columns the sweep reads (`id`, `expires_at`) and migration 16's index; the real table is swept on
 * PGlite in `semantic-sweeper.test.ts`.
 */
import pg from "pg";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { SEMANTIC_CACHE_EXPIRY_INDEX_SQL } from "../../../../services/gateway/src/db/migrations.js";
import { semanticSweptRowsCounter } from "../../../../services/gateway/src/response-cache/metrics.js";
import { SemanticCacheSweeper } from "../../../../services/gateway/src/response-cache/semantic/sweeper.js";
import { metricValue } from "../../../helpers/metrics.js";
import { databasePerTest } from "../../../helpers/postgres.js";
import { captureLogger } from "../../../helpers/redis.js";

const dbs = databasePerTest();

/** A database with the stand-in table holding `expired` expired rows and `live` live ones. */
async function table(expired: number, live: number) {
  const db = await dbs.database();
  const sql = await dbs.sqlClient(db);
  await sql.query(`CREATE TABLE semantic_cache_entries (
    id bigserial PRIMARY KEY, expires_at timestamptz NOT NULL)`);
  await sql.query(SEMANTIC_CACHE_EXPIRY_INDEX_SQL);
  await sql.query(
    `INSERT INTO semantic_cache_entries (expires_at)
     SELECT now() - interval '1 hour' + make_interval(secs => i) FROM generate_series(1, $1::int) AS i
     UNION ALL SELECT now() + interval '1 hour' FROM generate_series(1, $2::int)`,
    [expired, live],
  );
  return { db, sql };
}

/** A gateway instance's sweeper: its own pool (closed after the test) and counter. */
function instance(url: string, batchRows: number, batchesPerPass: number) {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  dbs.cleanups.push(() => pool.end());
  const registry = new Registry();
  const sweep = new SemanticCacheSweeper({
    pool,
    log: captureLogger(),
    swept: semanticSweptRowsCounter(registry),
    batchRows,
    batchesPerPass,
  });
  return { sweep, swept: () => metricValue(registry, "gateway_cache_semantic_swept_rows_total") };
}

const count = async (sql: pg.Client, where: string) =>
  Number((await sql.query(`SELECT count(*) AS n FROM semantic_cache_entries WHERE ${where}`)).rows[0].n);

describe("the semantic cache's sweeper with several instances (Postgres)", () => {
  it("skips the rows another instance's batch holds, without waiting for it", async () => {
    const { db, sql } = await table(10, 2);
    // Another instance's batch in flight: the five oldest expired rows locked, its transaction open.
    await sql.query("BEGIN");
    await sql.query(
      "SELECT id FROM semantic_cache_entries WHERE expires_at <= now() ORDER BY expires_at LIMIT 5 FOR UPDATE",
    );
    const other = instance(db.url, 100, 1);
    // Resolves while the lock is held (a sweep that waited for it would never end: the lock is released below).
    expect(await other.sweep.sweep()).toBe(5);
    await sql.query("COMMIT");
    expect(await count(sql, "expires_at <= now()")).toBe(5);
    expect(await other.sweep.sweep()).toBe(5);
    expect(await count(sql, "true")).toBe(2);
  });

  it("deletes each expired row once when two instances sweep at once", async () => {
    const { db, sql } = await table(3000, 50);
    const a = instance(db.url, 100, 100);
    const b = instance(db.url, 100, 100);
    const [byA, byB] = await Promise.all([a.sweep.sweep(), b.sweep.sweep()]);
    expect(byA + byB).toBe(3000);
    expect((await a.swept()) + (await b.swept())).toBe(3000);
    expect(await count(sql, "true")).toBe(50);
    expect(await count(sql, "expires_at <= now()")).toBe(0);
  });
});
