/**
 * How many spend-log rows of refused or failed calls one key may add per minute on this instance
 * (`GATEWAY_REFUSAL_ROWS_PER_KEY_PER_MINUTE`). A refused call costs the gateway almost nothing but its row, so a
 * key that keeps calling past its `rpm_limit` or budget would otherwise add one row per call, without bound.
 * Rows past the quota are not written; they are counted in `gateway_refusal_rows_dropped_total`. The calls
 * themselves are answered and counted in the request metrics as before.
 */
import { Counter, type Registry } from "prom-client";
import type { Clock } from "../time/clock.js";
import type { SpendRecorder } from "./types.js";

/** The default quota: refusal rows per key per minute on one instance. */
export const DEFAULT_REFUSAL_ROWS_PER_KEY_PER_MINUTE = 600;

/** The length of a quota window, ms. */
const WINDOW_MS = 60_000;

/** Options of {@link RefusalRowQuota}. */
export interface RefusalRowQuotaOptions {
  /** Rows a key may add per minute (≥ 0; 0 writes no refusal row). */
  perMinute: number;
  clock: Clock;
  /** Where `gateway_refusal_rows_dropped_total` is registered. */
  registry: Registry;
}

/**
 * A fixed one-minute window per key (the SHA-256 hex of the virtual key; `""` for the master key). Memory: one
 * map entry per key that had a refusal in the current window; the map is emptied when a new window starts.
 */
export class RefusalRowQuota {
  private readonly perMinute: number;
  private readonly clock: Clock;
  private readonly dropped: Counter;
  private windowEndsAt = 0;
  private readonly used = new Map<string, number>();

  constructor(options: RefusalRowQuotaOptions) {
    this.perMinute = options.perMinute;
    this.clock = options.clock;
    this.dropped = new Counter({
      name: "gateway_refusal_rows_dropped_total",
      help: "Spend-log rows of refused or failed calls not written: the key was past GATEWAY_REFUSAL_ROWS_PER_KEY_PER_MINUTE",
      registers: [options.registry],
    });
  }

  /** True when `keyHash` may add one more refusal row now (and counts it); false counts a dropped row. */
  take(keyHash: string | null): boolean {
    const now = this.clock.now();
    if (now >= this.windowEndsAt) {
      this.used.clear();
      this.windowEndsAt = now + WINDOW_MS;
    }
    const subject = keyHash ?? "";
    const used = this.used.get(subject) ?? 0;
    if (used >= this.perMinute) {
      this.dropped.inc();
      return false;
    }
    this.used.set(subject, used + 1);
    return true;
  }
}

/**
 * `spend` with `quota` in front of its rows of refused or failed calls (status ≥ 400 and spend 0: nothing was
 * billed), whichever route wrote them (model endpoints, `/mcp` tool calls); answered calls, cache hits and
 * failed calls that cost something pass untouched.
 */
export function withRefusalQuota(spend: SpendRecorder, quota: RefusalRowQuota): SpendRecorder {
  return {
    record(row) {
      const refusal = row.status >= 400 && row.spend === 0 && row.cacheHit !== true;
      if (refusal && !quota.take(row.keyHash)) return;
      spend.record(row);
    },
    flush: (timeoutMs) => spend.flush(timeoutMs),
  };
}
