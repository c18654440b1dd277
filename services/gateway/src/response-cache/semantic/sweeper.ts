/**
 * The semantic cache's sweeper: expired rows of `semantic_cache_entries` are never hit, and a store deletes only
 * the expired rows of its own filter key (`store-pg.ts`), so rows of prompts never asked again would stay. Every
 * `everyMs` (default one minute) a pass deletes them oldest first, in batches of at most `batchRows` rows (one
 * short statement each, through the `expires_at` index of migration 16), at most `batchesPerPass` batches.
 *
 * Several instances sweep the same table without double work or waiting: a batch picks its rows
 * `FOR UPDATE SKIP LOCKED`, so rows another instance's batch (or a store's delete) holds are left to it. A failing
 * pass is logged (the database's message, no connection string) and the next pass runs on time; nothing throws.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Counter } from "prom-client";
import type { Queryable } from "../../db/transaction.js";

/** Settings of {@link SemanticCacheSweeper}; tests shorten the interval and the batch. */
export interface SemanticSweeperOptions {
  /** The gateway's database (the semantic cache's table). */
  pool: Queryable;
  log: FastifyBaseLogger;
  /** Counts the rows deleted (`gateway_cache_semantic_swept_rows_total`); none when absent. */
  swept?: Counter;
  /** Interval between the end of a pass and the start of the next, ms; default 60,000. */
  everyMs?: number;
  /** Rows one batch deletes at most; default 1,000. */
  batchRows?: number;
  /** Batches one pass runs at most (it stops early at a batch that was not full); default 10. */
  batchesPerPass?: number;
}

/**
 * One batch: the ids of at most `$1` expired rows, oldest first, skipping rows locked elsewhere, deleted by
 * primary key (`= ANY(ARRAY(…))` keeps the delete on the primary key index whatever the batch size).
 */
export const SWEEP_BATCH_SQL = `DELETE FROM semantic_cache_entries
 WHERE id = ANY(ARRAY(
   SELECT id FROM semantic_cache_entries
    WHERE expires_at <= now()
    ORDER BY expires_at
    LIMIT $1
      FOR UPDATE SKIP LOCKED))`;

/** See the module comment. `start()` schedules the passes, `stop()` ends them (awaiting one in flight). */
export class SemanticCacheSweeper {
  private readonly everyMs: number;
  private readonly batchRows: number;
  private readonly batchesPerPass: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: SemanticSweeperOptions) {
    this.everyMs = options.everyMs ?? 60_000;
    this.batchRows = options.batchRows ?? 1000;
    this.batchesPerPass = options.batchesPerPass ?? 10;
  }

  /**
   * One pass now: batches until one deletes fewer than `batchRows` rows or `batchesPerPass` ran.
   * @returns the rows deleted.
   * @throws the database's error of a failing batch (rows of earlier batches stay deleted and counted).
   */
  async sweep(): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < this.batchesPerPass && !this.stopped; batch++) {
      const result = await this.options.pool.query(SWEEP_BATCH_SQL, [this.batchRows]);
      const deleted = result.rowCount ?? 0;
      total += deleted;
      this.options.swept?.inc(deleted);
      if (deleted < this.batchRows) break;
    }
    return total;
  }

  /** Schedules a pass every `everyMs` (the first `everyMs` from now); a pass never overlaps the previous. */
  start(): this {
    this.schedule();
    return this;
  }

  /** Stops the passes; resolves once a pass in flight has ended (before the pool closes). Never rejects. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pass().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, this.everyMs);
    this.timer.unref();
  }

  private async pass(): Promise<void> {
    try {
      const deleted = await this.sweep();
      if (deleted > 0) this.options.log.debug({ deleted }, "semantic cache: expired rows swept");
    } catch (error) {
      const { message, code } = error as { message?: string; code?: string };
      this.options.log.warn({ err: message, code }, "semantic cache: sweeping expired rows failed");
    }
  }
}
