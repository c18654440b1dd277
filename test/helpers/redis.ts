/**
 * Helpers for suites that use the machine's shared Redis: a unique key prefix per suite (suites run in parallel
 * forks), cleanup of that prefix, a manual clock, a log capture, a polling wait and a subscribed invalidation bus.
 */
import { randomBytes } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import type { RedisInvalidationBus } from "../../services/gateway/src/cache/redis-bus.js";
import { createLimits } from "../../services/gateway/src/limits/index.js";
import type { Clock } from "../../services/gateway/src/time/clock.js";

/** The Redis the tests use (`.ci/run` starts it). */
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** A prefix no other suite or run uses, e.g. `test:limits:1a2b3c4d:`. */
export function uniquePrefix(suite: string): string {
  return `test:${suite}:${randomBytes(4).toString("hex")}:`;
}

/** Opens a plain client on `url` (default {@link REDIS_URL}) for inspecting keys. */
export function inspector(url = REDIS_URL): Redis {
  return new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1 });
}

/**
 * Deletes every key under `prefix` in the Redis at `url` (default {@link REDIS_URL}) by SCAN + DEL, never FLUSH:
 * other suites share the database. Rejects when Redis does not answer.
 */
export async function deleteKeys(prefix: string, url = REDIS_URL): Promise<void> {
  const client = inspector(url);
  client.on("error", () => {}); // a refused connection surfaces as the rejected command below
  try {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
}

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  constructor(private current: number) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
}

/** One captured log call. */
export interface LogLine {
  level: string;
  msg: string;
  /** Everything passed, serialised, for "no secret in any log line" assertions. */
  text: string;
}

/** A logger that records every line (all levels) instead of printing it. */
export function captureLogger(): FastifyBaseLogger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: string) =>
    (...args: unknown[]) => {
      const msg = args.find((a) => typeof a === "string") ?? "";
      lines.push({ level, msg: String(msg), text: JSON.stringify(args) });
    };
  const logger = {
    lines,
    level: "trace",
    fatal: at("fatal"),
    error: at("error"),
    warn: at("warn"),
    info: at("info"),
    debug: at("debug"),
    trace: at("trace"),
    silent: () => {},
    child: () => logger,
  };
  return logger as unknown as FastifyBaseLogger & { lines: LogLine[] };
}

/** Polls `condition` every `intervalMs` until it holds; rejects with `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  intervalMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * A gateway instance's invalidation bus on Redis (`createLimits` with `url` and `keyPrefix`), subscribed before it
 * is returned; its limits are closed by one of `cleanups` (the suite's, run after each test). A short
 * reconnect delay, so a test that cuts the link sees it come back quickly.
 */
export async function subscribedRedisBus(
  keyPrefix: string,
  cleanups: Array<() => Promise<unknown>>,
  url = REDIS_URL,
): Promise<RedisInvalidationBus> {
  const limits = createLimits({
    redisUrl: url,
    keyPrefix,
    redisTimings: { maxReconnectDelayMs: 100 },
    clock: new ManualClock(0),
    log: captureLogger(),
    registry: new Registry(),
  });
  cleanups.push(() => limits.close());
  const bus = limits.bus as RedisInvalidationBus;
  if (!(await bus.ready())) throw new Error(`the invalidation bus on ${url} did not subscribe within 5 s`);
  return bus;
}
