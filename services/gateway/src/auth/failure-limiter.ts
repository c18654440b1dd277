/**
 * A per-source limit on authentication failures: after `limit` invalid keys from one source (client address)
 * within a fixed one-minute window, that source's requests whose key would need a database lookup are refused
 * with 429 and `retry-after` (seconds to the window's end) until the window ends. Keys the gateway has cached
 * (in use by someone) still pass, so a client behind the same address as a flood keeps working.
 *
 * With Redis the failures are counted there (`INCR` of `<prefix>authfail:<source>:<minute>`, expiring with the
 * window), so every instance sees the same count; each instance keeps the verdict "blocked until" locally, so a
 * blocked source costs no Redis call per request. Without Redis, or while it does not answer, the count is kept
 * in process (bounded: at most `maxSources` sources, oldest dropped first).
 */

import { setBounded } from "../cache/freshness.js";
import type { RedisConnection } from "../cache/redis.js";
import type { Clock } from "../time/clock.js";

/** Length of one counting window, ms. */
export const FAILURE_WINDOW_MS = 60_000;

/** Counts failed authentications per source and says when a source is over its limit. */
export interface AuthFailureLimiter {
  /**
   * Seconds until `source` may try unknown keys again (≥ 1), or 0 when it is not blocked. Synchronous: no I/O.
   */
  blockedFor(source: string): number;
  /** Counts one failure of `source` (an invalid key). Never throws (a Redis error falls back to in process). */
  recordFailure(source: string): Promise<void>;
}

/** Options of {@link createFailureLimiter}. */
export interface FailureLimiterOptions {
  /** Failures per source per minute before it is blocked (GATEWAY_AUTH_FAILURE_LIMIT); 0 turns the limit off. */
  limit: number;
  /** Business time (the window). */
  clock: Clock;
  /** The shared Redis, when configured. */
  redis?: RedisConnection | undefined;
  /** Most sources tracked in process. Default 100 000. */
  maxSources?: number;
}

interface Window {
  start: number;
  count: number;
}

/** The limiter that never blocks (limit 0). */
const UNLIMITED: AuthFailureLimiter = { blockedFor: () => 0, recordFailure: async () => undefined };

/** Builds the limiter: shared through Redis when `redis` is given, in process otherwise. */
export function createFailureLimiter(options: FailureLimiterOptions): AuthFailureLimiter {
  if (options.limit <= 0) return UNLIMITED;
  return new FailureLimiter(options);
}

class FailureLimiter implements AuthFailureLimiter {
  private readonly windows = new Map<string, Window>();
  /** Source → epoch ms until which it is blocked. */
  private readonly blocked = new Map<string, number>();
  private readonly maxSources: number;

  constructor(private readonly options: FailureLimiterOptions) {
    this.maxSources = options.maxSources ?? 100_000;
  }

  blockedFor(source: string): number {
    const until = this.blocked.get(source);
    if (until === undefined) return 0;
    const left = until - this.options.clock.now();
    if (left <= 0) {
      this.blocked.delete(source);
      return 0;
    }
    return Math.ceil(left / 1000);
  }

  async recordFailure(source: string): Promise<void> {
    const now = this.options.clock.now();
    const start = now - (now % FAILURE_WINDOW_MS);
    const count = (await this.sharedCount(source, start)) ?? this.localCount(source, start);
    if (count >= this.options.limit) {
      setBounded(this.blocked, source, start + FAILURE_WINDOW_MS, this.maxSources);
    }
  }

  private localCount(source: string, start: number): number {
    const window = this.windows.get(source);
    if (window !== undefined && window.start === start) {
      window.count += 1;
      return window.count;
    }
    setBounded(this.windows, source, { start, count: 1 }, this.maxSources);
    return 1;
  }

  /** The count after this failure in Redis, or undefined without Redis or when it fails. */
  private async sharedCount(source: string, start: number): Promise<number | undefined> {
    const redis = this.options.redis;
    if (redis === undefined || !redis.isConnected()) return undefined;
    const key = `${redis.keyPrefix}authfail:${source}:${start}`;
    const began = performance.now();
    try {
      const replies = await redis.client
        .multi()
        .incr(key)
        .pexpire(key, FAILURE_WINDOW_MS + 5000)
        .exec();
      redis.observe("auth_failure", (performance.now() - began) / 1000);
      const count = replies?.[0]?.[1];
      return typeof count === "number" ? count : undefined;
    } catch (error) {
      redis.reportFailureIfLinkDown("auth_failure", error);
      return undefined;
    }
  }
}
