/**
 * A throw-away Postgres database per test file. Suites run in parallel forks against the machine's one
 * Postgres server, so each gets its own uniquely named database and drops it afterwards.
 *
 * The server is `TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/postgres`, trust auth);
 * `.ci/run` starts it when it is not running.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterEach } from "vitest";
import { createPool } from "../../services/gateway/src/db/pool.js";
import { captureLogger } from "./redis.js";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.js";

/** The maintenance database the test databases are created from. */
export const adminUrl = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  /** Connection string of the new database. */
  url: string;
  /** Database name (`gw_test_<random>`). */
  name: string;
  /** Host port of the server, for pointing a TCP proxy at it. */
  port: number;
  /** The same database reached through another host/port (a proxy in front of the server). */
  urlVia(port: number, host?: string): string;
  /** Drops the database, ending any connection still open to it. */
  drop(): Promise<void>;
}

async function withAdmin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty, uniquely named database on the test server. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `gw_test_${randomBytes(6).toString("hex")}`;
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
  const base = new URL(adminUrl);
  const urlVia = (port: number, host = "127.0.0.1") => {
    const u = new URL(adminUrl);
    u.hostname = host;
    u.port = String(port);
    u.pathname = `/${name}`;
    return u.toString();
  };
  const port = Number(base.port || 5432);
  return {
    name,
    port,
    url: urlVia(port, base.hostname),
    urlVia,
    drop: () =>
      withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** What {@link databasePerTest} gives a suite; everything it opens is closed after the current test. */
export interface PerTestDatabases {
  /** Run after the current test, last pushed first: push the closing of whatever the test opens. */
  cleanups: Array<() => Promise<unknown>>;
  /** A new test database, dropped after the current test (after everything opened on it since). */
  database(): Promise<TestDatabase>;
  /** A TCP proxy in front of the database's server, for cutting the connection. */
  proxyTo(db: TestDatabase): Promise<TcpProxy>;
  /** A connected plain client on the database, for checking rows directly. */
  sqlClient(db: TestDatabase): Promise<pg.Client>;
}

/**
 * For suites that open a fresh database in each test: registers an `afterEach` (call it at the top level of the
 * test file) that runs the test's {@link PerTestDatabases.cleanups} in reverse order.
 */
export function databasePerTest(): PerTestDatabases {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    cleanups,
    async database() {
      const db = await createTestDatabase();
      cleanups.push(() => db.drop());
      return db;
    },
    async proxyTo(db) {
      const proxy = await startTcpProxy(db.port);
      cleanups.push(() => proxy.close());
      return proxy;
    },
    async sqlClient(db) {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      cleanups.push(() => client.end());
      return client;
    },
  };
}

/**
 * The gateway's own pool (`createPool`: its type parsers, so numeric columns read as numbers) on `url`, whose
 * `query` calls are counted in `counter.queries` (to assert how often a cache reads the database). Call `end()`
 * when done.
 */
export function countingPool(url: string, max = 2): { pool: pg.Pool; counter: { queries: number } } {
  const pool = createPool(url, captureLogger(), { max });
  const counter = { queries: 0 };
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  Object.assign(pool, {
    query: (...args: unknown[]) => {
      counter.queries += 1;
      return query(...args);
    },
  });
  return { pool, counter };
}

/** The tables the gateway's migrations make (with their own bookkeeping table), in name order. */
export const GATEWAY_TABLES = [
  "audit_log",
  "budget_events",
  "gateway_migrations",
  "keys",
  "response_owners",
  "spend_logs",
  "team_memberships",
  "teams",
  "users",
];

/** The names of the tables in the `public` schema of the database behind `db`, in name order. */
export async function publicTables(db: Pick<pg.Pool, "query">): Promise<string[]> {
  const tables = await db.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
  );
  return tables.rows.map((r) => r.table_name);
}
