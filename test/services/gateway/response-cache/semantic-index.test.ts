/**
 * The semantic store's ANN index (migration 15) on PGlite's pgvector (the machine's Postgres has none): the
 * first write of a dimension creates its HNSW index (cosine ops, partial on that dimension), the lookup's SQL
 * uses it for a filter key that holds the table's rows, and lookups through it still hit and miss by filter key
 * and threshold.
 */
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import type pg from "pg";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SEMANTIC_CACHE_INDEX_FUNCTION_SQL,
  SEMANTIC_CACHE_TABLE_SQL,
} from "../../../../services/gateway/src/db/migrations.js";
import {
  nearestSql,
  PgSemanticStore,
} from "../../../../services/gateway/src/response-cache/semantic/store-pg.js";

const SLOW = { timeout: 120_000 };
const KEY_A = "a".repeat(64);
const KEY_B = "b".repeat(64);
const entry = (text: string) =>
  JSON.stringify({
    v: 1,
    callType: "acompletion",
    answer: { text },
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    cost: 0.001,
    model: "openai/fake",
    deploymentId: "d",
    storedAt: 0,
  });

let db: PGlite;
let store: PgSemanticStore;

beforeAll(async () => {
  db = await PGlite.create({ extensions: { vector } });
  await db.exec(SEMANTIC_CACHE_TABLE_SQL);
  await db.exec(SEMANTIC_CACHE_INDEX_FUNCTION_SQL);
  // PGlite answers `query(text, params)` with `{rows}` as pg's pool does: the store needs no more.
  store = new PgSemanticStore(db as unknown as pg.Pool, pino({ level: "silent" }));
}, SLOW.timeout);
afterAll(async () => {
  await db?.close();
});

describe("the semantic cache's HNSW index", SLOW, () => {
  it("is created by the first write of a dimension: HNSW, cosine ops, that dimension only", async () => {
    await store.set(KEY_A, "team:a", [1, 0, 0], entry("x axis"), 60);
    const { rows } = await db.query<{ indexdef: string }>(
      "SELECT indexdef FROM pg_indexes WHERE tablename = 'semantic_cache_entries' AND indexname LIKE '%hnsw%'",
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.indexdef).toMatch(/USING hnsw \(\(\(?embedding\)?::vector\(3\)\) vector_cosine_ops\)/);
    expect(rows[0]?.indexdef).toMatch(/WHERE \(vector_dims\(embedding\) = 3\)/);
  });

  it("still hits the nearest entry of the filter key at the threshold, and misses others", async () => {
    await store.set(KEY_A, "team:a", [0, 1, 0], entry("y axis"), 60);
    await store.set(KEY_B, "team:b", [0.9, 0.1, 0], entry("other tenant"), 60);
    const hit = await store.nearest(KEY_A, [0.95, 0.05, 0], 0.9);
    expect(hit?.entry.answer).toEqual({ text: "x axis" });
    expect(hit?.similarity).toBeGreaterThan(0.9);
    expect(await store.nearest(KEY_A, [0, 0, 1], 0.9)).toBeUndefined();
    expect((await store.nearest(KEY_B, [0, 1, 0], 0.9))?.entry).toBeUndefined();
    expect(await store.nearest(KEY_A, [1, 0, 0, 0], 0.5)).toBeUndefined();
  });

  it("is what the lookup's plan scans for a filter key holding the table's rows", async () => {
    await db.exec(`INSERT INTO semantic_cache_entries (filter_key, scope, embedding, entry, expires_at)
      SELECT '${KEY_A}', 'team:a', ('[' || random() || ',' || random() || ',' || random() || ']')::vector,
             '{}'::jsonb, now() + interval '1 hour'
        FROM generate_series(1, 2000)`);
    await db.exec("ANALYZE semantic_cache_entries");
    const plan = await db.query<{ "QUERY PLAN": string }>(
      `EXPLAIN ${nearestSql(3)}`.replace("$1", `'${KEY_A}'`).replaceAll("$2", "'[1,0,0]'"),
    );
    expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("semantic_cache_entries_hnsw_3");
  });
});
