/**
 * The semantic response cache (`cache_params.type: postgres-semantic`; docs/cache.md "Semantic cache"): after an
 * exact miss, a chat or text completion without tools is looked up by the embedding of its last user message
 * (`prompt.ts`) among the entries of the same filter key (model group, system prompt, earlier turns, parameters,
 * scope, namespace: all exact) in Postgres with pgvector (`store-pg.ts`); the nearest at or above
 * `similarity_threshold` is a hit, replayed as an exact hit is (`pipeline/steps/cache-replay.ts`).
 */
import type { FastifyBaseLogger } from "fastify";
import type pg from "pg";
import type { Registry } from "prom-client";
import type { SemanticCacheSettings } from "../../config/cache-settings.js";
import { SEMANTIC_CACHE_EXPIRY_INDEX_SQL, SEMANTIC_CACHE_TABLE_SQL } from "../../db/migrations.js";
import type { AbortSource } from "../../router/call-abort.js";
import type { Router } from "../../router/router.js";
import { semanticSweptRowsCounter } from "../metrics.js";
import { embedText } from "./embed.js";
import { PgSemanticStore, type SemanticMatch } from "./store-pg.js";
import { SemanticCacheSweeper, type SemanticSweeperOptions } from "./sweeper.js";

export { semanticPrompt } from "./prompt.js";
export type { SemanticMatch } from "./store-pg.js";

/** The semantic cache the lookup and store steps use (`ResponseCache.semantic`). */
export interface SemanticCache {
  readonly settings: SemanticCacheSettings;
  /** The embedding of `text` (through the router; see `embed.ts`). @throws when the embedding call fails. */
  embed(text: string, signal: AbortSource): Promise<number[]>;
  /** The nearest entry of `filterKey` at or above the threshold; undefined for a miss (or a failing database). */
  nearest(filterKey: string, vector: readonly number[]): Promise<SemanticMatch | undefined>;
  /** Stores an entry (never throws; a failing write is logged and dropped). */
  set(
    filterKey: string,
    scope: string,
    vector: readonly number[],
    json: string,
    ttlSeconds: number,
  ): Promise<void>;
  /** Stops the sweeper of expired rows (`sweeper.ts`), awaiting a pass in flight; call before the pool closes. */
  close(): Promise<void>;
}

/** Raised at start-up when `postgres-semantic` cannot run; the message says what to do. */
export class SemanticCacheUnavailableError extends Error {
  override name = "SemanticCacheUnavailableError";
}

/**
 * Checks the database and creates the semantic cache, and starts its sweeper of expired rows (`sweeper.ts`;
 * `sweep` tunes it, `registry` gets its counter). Creates the `vector` extension and the table (with its
 * expiry index) when the server has pgvector but an earlier migration ran without it.
 * @throws SemanticCacheUnavailableError without a database (no DATABASE_URL and no embedded one) or without
 *   pgvector on the server.
 */
export async function createSemanticCache(options: {
  settings: SemanticCacheSettings;
  pool: pg.Pool | undefined;
  router: Router;
  log: FastifyBaseLogger;
  registry?: Registry;
  sweep?: Pick<SemanticSweeperOptions, "everyMs" | "batchRows" | "batchesPerPass">;
}): Promise<SemanticCache> {
  const { settings, pool, router, log } = options;
  if (pool === undefined)
    throw new SemanticCacheUnavailableError(
      "cache_params.type postgres-semantic needs the gateway's Postgres: set DATABASE_URL (or run with the embedded database)",
    );
  const table = async () =>
    (await pool.query<{ t: string | null }>("SELECT to_regclass('semantic_cache_entries')::text AS t"))
      .rows[0]?.t != null;
  if (!(await table())) await pool.query(SEMANTIC_CACHE_TABLE_SQL + SEMANTIC_CACHE_EXPIRY_INDEX_SQL);
  if (!(await table()))
    throw new SemanticCacheUnavailableError(
      "cache_params.type postgres-semantic needs the pgvector extension on the gateway's Postgres, which does not " +
        "have it: install pgvector for this Postgres major version (e.g. the postgresql-<major>-pgvector package, " +
        "or the pgvector/pgvector:pg<major> image), or use cache_params.type redis",
    );
  const store = new PgSemanticStore(pool, log);
  const sweeper = new SemanticCacheSweeper({
    pool,
    log,
    ...(options.registry === undefined ? {} : { swept: semanticSweptRowsCounter(options.registry) }),
    ...options.sweep,
  }).start();
  return {
    settings,
    embed: (text, signal) => embedText(router, settings.embeddingModel, text, signal),
    nearest: (filterKey, vector) => store.nearest(filterKey, vector, settings.similarityThreshold),
    set: (filterKey, scope, vector, json, ttl) => store.set(filterKey, scope, vector, json, ttl),
    close: () => sweeper.stop(),
  };
}
