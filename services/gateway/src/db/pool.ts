/**
 * The Postgres connection pool (DATABASE_URL) and the start-up wait for the database.
 */
import type { FastifyBaseLogger } from "fastify";
import pg from "pg";
import { permanentConnectionProblem } from "./errors.js";

/** OIDs of the types read back as JS numbers instead of pg's default strings. */
const NUMERIC_OID = 1700;
const INT8_OID = 20;

/**
 * Type parsers for this pool only (pg's global parsers are left alone): `numeric` (money, USD) and `bigint`
 * (counts, token sums) become JS numbers. Money is stored as `numeric` so that sums of many tiny costs stay
 * exact in the database; a double is precise enough for one value read back (15–17 significant digits).
 */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === NUMERIC_OID) return (value: string) => Number.parseFloat(value);
    if (oid === INT8_OID) return (value: string) => Number.parseInt(value, 10);
    return pg.types.getTypeParser(oid, format as "text");
  },
} as unknown as pg.CustomTypesConfig;

/** Settings of the gateway's pool. */
export interface PoolSettings {
  /** Most connections open at once. Default 10. */
  max?: number;
  /** Give up opening a connection after this many ms. Default 5000. */
  connectionTimeoutMillis?: number;
  /** Client-side timeout of one query, ms. Default 15000. */
  queryTimeoutMillis?: number;
}

/**
 * Makes the pool. Errors of idle connections (the database restarting, a network cut) are logged, never
 * thrown: an unhandled pool `error` event would end the process.
 */
export function createPool(
  databaseUrl: string,
  log: FastifyBaseLogger,
  settings: PoolSettings = {},
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: settings.max ?? 10,
    connectionTimeoutMillis: settings.connectionTimeoutMillis ?? 5000,
    query_timeout: settings.queryTimeoutMillis ?? 15_000,
    idleTimeoutMillis: 30_000,
    application_name: "platform-gateway",
    types,
  });
  pool.on("error", (error) => {
    log.warn(
      { database: describeDatabase(databaseUrl), err: error.message },
      "idle Postgres connection lost",
    );
  });
  return pool;
}

/** `host:port/database` of a connection string: never the user's password. */
export function describeDatabase(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    const database = url.pathname.replace(/^\//, "") || "postgres";
    return `${url.hostname || "localhost"}:${url.port || "5432"}/${database}`;
  } catch {
    return "(unparseable DATABASE_URL)";
  }
}

/**
 * Why a DATABASE_URL cannot be used, or undefined when it can: it must parse as a URL with the `postgres:` or
 * `postgresql:` scheme and name a host. The message never repeats the URL (it may hold a password).
 */
export function databaseUrlProblem(databaseUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    return "not a URL; expected postgres://user:password@host:5432/database";
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    return `scheme "${url.protocol}" is not postgres: or postgresql:; expected postgres://user:password@host:5432/database`;
  }
  if (url.hostname === "") return "no host; expected postgres://user:password@host:5432/database";
  return undefined;
}

/** Options of {@link waitForDatabase}. */
export interface WaitOptions {
  /** Give up after this many ms. */
  timeoutMs: number;
  log: FastifyBaseLogger;
  /** Pause between attempts, ms (doubles up to 5 s). Default 500. */
  retryDelayMs?: number;
}

/** Raised when Postgres cannot be reached at start-up; the message names host:port, never the password. */
export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
}

/** Raised at once for a DATABASE_URL that waiting cannot fix (unparseable, no such database, login refused). */
export class DatabaseConfigError extends Error {
  override name = "DatabaseConfigError";
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Waits until `SELECT 1` succeeds, retrying an unreachable database (a container still starting) for a
 * bounded time and logging progress ("waiting for Postgres at host:port …").
 * @throws DatabaseConfigError at once for an unparseable URL, a database that does not exist or a refused
 *   login; DatabaseUnavailableError after `timeoutMs`, with the last error's message.
 */
export async function waitForDatabase(
  pool: pg.Pool,
  databaseUrl: string,
  options: WaitOptions,
): Promise<void> {
  const target = describeDatabase(databaseUrl);
  const urlProblem = databaseUrlProblem(databaseUrl);
  if (urlProblem !== undefined) throw new DatabaseConfigError(`DATABASE_URL: ${urlProblem}.`);
  const started = performance.now();
  let delay = options.retryDelayMs ?? 500;
  let attempt = 0;
  for (;;) {
    attempt += 1;
    try {
      await pool.query("SELECT 1");
      if (attempt > 1) options.log.info({ database: target }, `Postgres at ${target} is reachable`);
      return;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const permanent = permanentConnectionProblem(error);
      if (permanent !== undefined) {
        throw new DatabaseConfigError(`Postgres at ${target}: ${permanent}. Server said: ${message}`);
      }
      const elapsed = performance.now() - started;
      if (elapsed + delay > options.timeoutMs) {
        throw new DatabaseUnavailableError(
          `Postgres at ${target} is not reachable after ${Math.round(elapsed / 1000)} s ` +
            `(${attempt} attempts; last error: ${message}). Check DATABASE_URL and that the database is running.`,
        );
      }
      options.log.warn(
        { database: target, attempt, err: message },
        `waiting for Postgres at ${target} … (${Math.round(elapsed / 1000)} s of ${Math.round(options.timeoutMs / 1000)} s)`,
      );
      await sleep(delay);
      delay = Math.min(delay * 2, 5000);
    }
  }
}
