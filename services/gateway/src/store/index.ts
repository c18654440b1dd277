/**
 * The gateway's Postgres store (DATABASE_URL): virtual keys, users, budgets and spend. One call builds it at
 * start-up: wait for the database, migrate, replay the spend spool, then hand out the pool (for the
 * repositories the admin API uses), the key authenticator and the spend recorder. It builds no HTTP routes.
 */

import { join } from "node:path";
import type { FastifyBaseLogger } from "fastify";
import type pg from "pg";
import type { Registry } from "prom-client";
import type { KeyAuthenticator, UserAttributor } from "../auth/types.js";
import type { InvalidationBus } from "../cache/types.js";
import type { GatewayEnv } from "../config/env.js";
import { MigrationsPendingError, migrate, pendingMigrations } from "../db/migrate.js";
import {
  createPool,
  DatabaseConfigError,
  databaseUrlProblem,
  describeDatabase,
  waitForDatabase,
} from "../db/pool.js";
import { CachedKeyAuthenticator, type KeyCacheSettings } from "../keys/authenticator.js";
import { ensureServiceKey } from "../keys/service-key.js";
import { BatchingSpendRecorder, type SpendHandover } from "../spend/recorder.js";
import { SpendSpool, spoolFolderName } from "../spend/spool.js";
import { SpendWriterThread } from "../spend/thread-writer.js";
import type { SpendRecorder } from "../spend/types.js";
import type { Clock } from "../time/clock.js";
import { userAttributor } from "../users/attribution.js";
import { UserDirectory } from "../users/directory.js";

export interface StoreOptions {
  /** postgres://user:password@host:port/database; the password is never logged. */
  databaseUrl: string;
  /** Business time: key expiry, budget periods, created/updated times. */
  clock: Clock;
  /** Cross-instance invalidation (Redis pub/sub, or in-process without Redis). */
  bus: InvalidationBus;
  log: FastifyBaseLogger;
  /**
   * GATEWAY_SPOOL_DIR: spend rows Postgres has not taken are kept under `<spoolDir>/<host_port_database>/`
   * and replayed at the next start.
   */
  spoolDir: string;
  /** Gets `litellm_spend_buffer_rows`, `litellm_spend_flush_failures_total`, `litellm_spend_rows_dropped_total`. */
  registry: Registry;
  /**
   * GATEWAY_RUN_MIGRATIONS: apply pending migrations at start-up (default true); false: only check that none is
   * pending (a rollout applied them once, e.g. the kubernetes target's `gateway-migrate` Job).
   */
  runMigrations?: boolean;
  /** How long start-up waits for an unreachable database, ms. Default 60 000. */
  startupTimeoutMs?: number;
  /** Spend write interval, ms. Default 1000. */
  flushIntervalMs?: number;
  /**
   * Optional: key cache tuning (defaults `CACHE_AGES` in `cache/freshness.ts`: refresh after 60 s, at most 120 s
   * stale while the bus delivers without a break; after 1 s and 1.5 s otherwise).
   */
  keyCache?: KeyCacheSettings;
  /** Optional: spend queue bound, rows. Default 100 000. */
  maxBufferedSpendRows?: number;
  /** Limits of chat users provisioned on their first call (DEFAULT_USER_BUDGET, …). */
  userDefaults: GatewayEnv["userDefaults"];
  /** CHAT_SERVICE_KEY: ensured to exist at start-up (`keys/service-key.ts`); undefined = none. */
  chatServiceKey?: string | undefined;
  /** Optional: most pool connections. Default 10; the embedded database takes one (`db/embedded.ts`). */
  poolMax?: number;
  /**
   * Optional: the database's name in log lines and its spool folder; default `host:port/database` of the URL.
   * The embedded database, on a new port at every start, passes a name that stays the same.
   */
  databaseName?: string;
  /**
   * Optional: write spend batches in a worker thread with its own connection (`spend/thread-writer.ts`), off
   * the event loop. Default true; the embedded database passes false (it serves one session).
   */
  spendThread?: boolean;
}

export interface Store {
  /** The pool the repositories run on (the admin API gets it injected). */
  pool: pg.Pool;
  keys: KeyAuthenticator;
  /** Books the chat's service-key calls on the chat user they name (`users/attribution.ts`). */
  users: UserAttributor;
  spend: SpendRecorder;
  /** `SELECT 1` within 2 s. */
  readiness(): Promise<{ status: "connected" | "disconnected"; detail?: string }>;
  /**
   * Hands spend over (written to Postgres within `timeoutMs`, default 5000, or spooled to disk), logs how many
   * rows went to the spool and where, then ends the pool (waiting at most 2 s for queries still running).
   */
  close(timeoutMs?: number): Promise<SpendHandover>;
}

const withTimeout = <T>(promise: Promise<T>, ms: number, message: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
};

/**
 * Connects (retrying an unreachable database for `startupTimeoutMs`, logging "waiting for Postgres at
 * host:port …"), applies migrations (safe with several instances starting at once; with `runMigrations: false`
 * only checks that none is pending), ensures the chat's service
 * key (CHAT_SERVICE_KEY), starts the spend writer (and waits for its thread to load).
 * @throws DatabaseConfigError at once for an unusable DATABASE_URL, a database that does not exist or a refused
 *   login; DatabaseUnavailableError when the database stays unreachable; the migration's error when one fails;
 *   MigrationsPendingError with `runMigrations: false` when a migration is not applied.
 */
export async function createStore(options: StoreOptions): Promise<Store> {
  const { log, clock, bus } = options;
  const urlProblem = databaseUrlProblem(options.databaseUrl);
  if (urlProblem !== undefined) throw new DatabaseConfigError(`DATABASE_URL: ${urlProblem}.`);
  const target = options.databaseName ?? describeDatabase(options.databaseUrl);
  const pool = createPool(options.databaseUrl, log, { max: options.poolMax });
  try {
    await waitForDatabase(pool, options.databaseUrl, { timeoutMs: options.startupTimeoutMs ?? 60_000, log });
    if (options.runMigrations === false) {
      const pending = await pendingMigrations(pool);
      if (pending.length > 0) throw new MigrationsPendingError(pending);
      log.info("database migrations: none pending (GATEWAY_RUN_MIGRATIONS=false: applied by the rollout)");
    } else await migrate(pool, log);
    if (options.chatServiceKey !== undefined) {
      await ensureServiceKey(pool, options.chatServiceKey, clock.now(), log);
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  const keys = new CachedKeyAuthenticator({ pool, clock, bus, log, ...options.keyCache });
  const users = userAttributor(
    new UserDirectory({ pool, clock, bus, log, userDefaults: options.userDefaults }),
    clock,
  );
  const spool = new SpendSpool(join(options.spoolDir, spoolFolderName(target)), log);
  const thread = options.spendThread === false ? undefined : new SpendWriterThread(options.databaseUrl, log);
  const spend = new BatchingSpendRecorder({
    spool,
    pool,
    ...(thread === undefined ? {} : { write: (rows, now) => thread.write(rows, now) }),
    clock,
    log,
    registry: options.registry,
    flushIntervalMs: options.flushIntervalMs ?? 1000,
    maxBufferedRows: options.maxBufferedSpendRows ?? 100_000,
  });
  const replayed = await spool.replay();
  spend.loadSpooled(replayed);
  const replayedRows = replayed.reduce((sum, segment) => sum + segment.rows.length, 0);
  if (replayedRows > 0) {
    log.info(
      { rows: replayedRows, files: replayed.length, dir: spool.dir },
      "spend spool: replaying rows an earlier run could not write to Postgres",
    );
  }
  await thread?.start();
  spend.start();
  log.info({ database: target }, "Postgres store ready");

  let closed = false;
  return {
    pool,
    keys,
    users,
    spend,
    async readiness() {
      try {
        await withTimeout(pool.query("SELECT 1"), 2000, "no answer within 2 s");
        return { status: "connected" };
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        return { status: "disconnected", detail: `Postgres at ${target}: ${reason}` };
      }
    },
    async close(timeoutMs = 5000) {
      if (closed) return { pending: 0, spooled: true, dir: spool.dir };
      closed = true;
      const handover = await spend.close(timeoutMs);
      await thread?.close();
      if (handover.pending > 0 && handover.spooled) {
        log.warn(
          { rows: handover.pending, dir: handover.dir },
          `spend: ${handover.pending} rows not yet in Postgres handed to the spool at ${handover.dir}; the next start writes them`,
        );
      } else if (handover.pending > 0) {
        log.error(
          { rows: handover.pending, dir: handover.dir },
          `spend: ${handover.pending} rows not written to Postgres and not spooled (see the spool error above); lost`,
        );
      } else {
        log.info("spend: every row written to Postgres");
      }
      await withTimeout(pool.end(), 2000, "queries still running after 2 s").catch((error: unknown) =>
        log.warn({ err: error instanceof Error ? error.message : String(error) }, "Postgres pool not closed"),
      );
      return handover;
    },
  };
}
