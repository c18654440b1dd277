/**
 * Shared pieces of the store tests: a controllable clock, a log that records lines, a store on a fresh
 * database, and a minimal fastify app with the auth plugin and the admin API.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyBaseLogger, FastifyError, FastifyInstance } from "fastify";
import Fastify from "fastify";
import { Registry } from "prom-client";
import { LocalInvalidationBus } from "../../../../services/gateway/src/cache/local-bus.js";
import type { InvalidationBus } from "../../../../services/gateway/src/cache/types.js";
import { GatewayError } from "../../../../services/gateway/src/errors/gateway-error.js";
import authPlugin from "../../../../services/gateway/src/plugins/auth.js";
import { createAdminRoutes } from "../../../../services/gateway/src/routes/admin/index.js";
import type { SpendLogRow } from "../../../../services/gateway/src/spend/types.js";
import { createStore, type Store, type StoreOptions } from "../../../../services/gateway/src/store/index.js";
import type { Clock } from "../../../../services/gateway/src/time/clock.js";
import { createTestDatabase } from "../../../helpers/postgres.js";

export const MASTER_KEY = "sk-master-test-key-0123456789";

export const userDefaults = { maxBudget: 10, budgetDuration: "30d", tpmLimit: 10_000, rpmLimit: 60 };

/** A clock the test moves by hand. */
export class ManualClock {
  constructor(public current = Date.UTC(2026, 0, 15, 12, 0, 0)) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/** A logger that keeps every line (message and bindings serialised), for asserting on what is logged. */
export function recordingLogger(lines: string[] = []): FastifyBaseLogger & { lines: string[] } {
  const write =
    (level: string) =>
    (...args: unknown[]) => {
      lines.push(`${level} ${args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ")}`);
    };
  const logger = {
    lines,
    level: "trace",
    fatal: write("fatal"),
    error: write("error"),
    warn: write("warn"),
    info: write("info"),
    debug: write("debug"),
    trace: write("trace"),
    silent: () => undefined,
    child: () => logger,
  };
  return logger as unknown as FastifyBaseLogger & { lines: string[] };
}

/** A store on `databaseUrl` with test defaults (manual clock, in-process bus, recording log). */
export async function openStore(
  databaseUrl: string,
  overrides: Partial<StoreOptions> = {},
): Promise<{
  store: Store;
  clock: ManualClock;
  bus: InvalidationBus;
  log: ReturnType<typeof recordingLogger>;
}> {
  const clock = (overrides.clock as ManualClock | undefined) ?? new ManualClock();
  const bus = overrides.bus ?? new LocalInvalidationBus();
  const log = (overrides.log as ReturnType<typeof recordingLogger> | undefined) ?? recordingLogger();
  const store = await createStore({
    databaseUrl,
    clock,
    bus,
    log,
    registry: new Registry(),
    startupTimeoutMs: 5000,
    flushIntervalMs: 100,
    spoolDir: mkdtempSync(join(tmpdir(), "gw-spool-")),
    userDefaults,
    ...overrides,
  });
  return { store, clock, bus, log };
}

/** fastify with the auth plugin, the admin API on `store` and the gateway's error mapping (as app.ts does it). */
export async function adminApp(opened: {
  store: Store;
  clock: Clock;
  bus: InvalidationBus;
}): Promise<FastifyInstance> {
  const { store, clock, bus } = opened;
  const app = Fastify();
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    const known =
      error instanceof GatewayError
        ? error
        : (error.statusCode ?? 500) < 500
          ? new GatewayError(error.statusCode ?? 400, error.message, { type: "invalid_request_error" })
          : new GatewayError(500, `internal error: ${error.message}`, { type: "internal_error" });
    return reply.code(known.status).headers(known.headers).send(known.toBody());
  });
  await app.register(authPlugin, { masterKey: MASTER_KEY, keys: store.keys });
  await app.register(
    createAdminRoutes({
      pool: store.pool,
      clock,
      bus,
      userDefaults,
      guardrailNames: ["pii", "prompt_injection"],
    }),
  );
  await app.ready();
  return app;
}

/** Calls the admin API with the master key (or `key`). */
export async function call(
  app: FastifyInstance,
  method: "GET" | "POST",
  url: string,
  body?: unknown,
  key: string | null = MASTER_KEY,
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies of many shapes, asserted field by field in tests
): Promise<{ status: number; body: any }> {
  const response = await app.inject({
    method,
    url,
    ...(body === undefined ? {} : { payload: body as object }),
    headers: key === null ? {} : { authorization: `Bearer ${key}` },
  });
  return { status: response.statusCode, body: response.json() };
}

let counter = 0;
/** A spend row with sensible defaults. */
export function spendRow(overrides: Partial<SpendLogRow> = {}): SpendLogRow {
  counter += 1;
  const now = Date.UTC(2026, 0, 15, 12, 0, 0);
  return {
    requestId: `req-${process.pid}-${counter}-${Math.random().toString(36).slice(2)}`,
    keyHash: null,
    keyAlias: null,
    userId: null,
    modelGroup: "general",
    model: "openai/gpt-4o-mini",
    deploymentId: "dep-1",
    promptTokens: 10,
    completionTokens: 5,
    totalTokens: 15,
    spend: 0.001,
    startTime: now,
    endTime: now + 200,
    status: 200,
    stream: false,
    ...overrides,
  };
}

/**
 * A fresh database with a store and the admin app on it (a manual clock), for a test file's `beforeAll`; `close`
 * (for its `afterAll`) closes the app and the store and drops the database.
 */
export async function adminAppOnFreshDatabase(): Promise<{
  store: Store;
  clock: ManualClock;
  app: FastifyInstance;
  close: () => Promise<void>;
}> {
  const db = await createTestDatabase();
  const opened = await openStore(db.url);
  const app = await adminApp(opened);
  const close = async () => {
    await app.close();
    await opened.store.close();
    await db.drop();
  };
  return { store: opened.store, clock: opened.clock, app, close };
}
