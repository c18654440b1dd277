/**
 * Which keys exist, without a database query per presented key: the filter the auth path consults for a source
 * (client address) over its authentication-failure limit (`auth/failure-limiter.ts`), so that a flood of bogus
 * keys from an address costs no lookups while a real key from the same address (a neighbour behind the same
 * NAT) is still recognised, even one made a moment ago on another instance.
 *
 * It holds the first 8 bytes of the hash of every key not revoked ({@link HashPrefixSet}: 2 MiB at 100,000
 * keys), read in one query the first time it is needed and kept current by the invalidation bus: every
 * `/key/generate` publishes the new key, and every instance adds it on delivery.
 *
 * {@link KnownKeyFilter.mayExist} says whether a lookup of a hash could find a key:
 *
 * - prefix held: yes (one lookup, after which the key is cached);
 * - prefix not held, and the bus has delivered without a break since the filter was read: the filter misses
 *   only keys whose message is still in flight. {@link InvalidationBus.caughtUp} waits for those (Redis: a PING
 *   on the subscriber link, whose reply comes after every message published before it; one PING in flight at a
 *   time, shared by the waiting callers), then the filter decides: no lookup. A key whose `/key/generate` has
 *   answered has been published, so it is recognised on any instance at once;
 * - otherwise (Redis down, the subscriber reconnected since the read, several workers without Redis, or the
 *   filter could not be read): the filter may miss keys made elsewhere. It is read again in the background (at
 *   most once per `reloadEveryMs`), and meanwhile one lookup per `graceIntervalMs` is allowed on this instance,
 *   whichever source asks: a flood then costs at most one query per second, and a real key gets through when
 *   it is the first to ask in its second, or after the next read.
 */
import type { FastifyBaseLogger } from "fastify";
import type pg from "pg";
import { busCovers } from "../cache/freshness.js";
import type { InvalidationBus } from "../cache/types.js";
import { HashPrefixSet } from "./hash-prefix-set.js";

/** Options of {@link KnownKeyFilter}. */
export interface KnownKeyFilterOptions {
  pool: pg.Pool;
  bus: InvalidationBus;
  log: FastifyBaseLogger;
  /** While the bus cannot vouch for the filter: one lookup of an unknown prefix per this many ms. Default 1000. */
  graceIntervalMs?: number;
  /** While the bus cannot vouch for the filter: at most one read of every key per this many ms. Default 30 000. */
  reloadEveryMs?: number;
}

/** The first 8 bytes (16 hex characters) of the hash of every key that can authenticate. */
const LOAD_SQL = "SELECT left(token, 16) AS prefix FROM keys WHERE revoked_at IS NULL";

/** The keys that exist, as hash prefixes; see the module comment. */
export class KnownKeyFilter {
  private readonly prefixes = new HashPrefixSet();
  /** performance.now() when the last successful read started; undefined before one. */
  private loadedAt: number | undefined;
  private lastLoadAttempt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;
  private lastGrace = Number.NEGATIVE_INFINITY;
  private readonly graceIntervalMs: number;
  private readonly reloadEveryMs: number;

  constructor(private readonly options: KnownKeyFilterOptions) {
    this.graceIntervalMs = options.graceIntervalMs ?? 1000;
    this.reloadEveryMs = options.reloadEveryMs ?? 30_000;
    options.bus.subscribe((message) => {
      if (message.kind === "key" && message.key.revokedAt === null) this.prefixes.add(message.key.token);
    });
  }

  /** Prefixes held (for tests and diagnostics). */
  get size(): number {
    return this.prefixes.size;
  }

  /** Bytes the prefixes take. */
  get byteLength(): number {
    return this.prefixes.byteLength;
  }

  /**
   * Whether a lookup of `hash` (SHA-256 hex of a presented key) could find a key; false means a lookup is not
   * worth its query. The first call reads the filter (one query; concurrent callers share it). Never throws: a
   * failed read leaves the decision to the grace rule (module comment).
   */
  async mayExist(hash: string): Promise<boolean> {
    if (this.loadedAt === undefined) await (this.loading ?? this.loadIfDue());
    if (this.prefixes.has(hash)) return true;
    const { bus } = this.options;
    if (this.loadedAt !== undefined && busCovers(bus, this.loadedAt) && (await bus.caughtUp())) {
      return this.prefixes.has(hash);
    }
    void this.loadIfDue();
    const now = performance.now();
    if (now - this.lastGrace < this.graceIntervalMs) return false;
    this.lastGrace = now;
    return true;
  }

  /** Reads every key's prefix unless a read is running or one started less than `reloadEveryMs` ago. */
  private loadIfDue(): Promise<void> {
    if (this.loading !== undefined) return this.loading;
    const started = performance.now();
    if (started - this.lastLoadAttempt < this.reloadEveryMs) return Promise.resolve();
    this.lastLoadAttempt = started;
    // Adds to the set, never replaces it: a key announced while the query runs stays in.
    this.loading = this.options.pool
      .query<{ prefix: string }>(LOAD_SQL)
      .then(
        (result) => {
          for (const row of result.rows) this.prefixes.add(row.prefix);
          this.loadedAt = started;
        },
        (error: unknown) => {
          this.options.log.warn(
            {
              err: error instanceof Error ? error.message : String(error),
              graceIntervalMs: this.graceIntervalMs,
            },
            "known-key filter: reading the keys' hash prefixes failed; limited addresses get one lookup per grace interval",
          );
        },
      )
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }
}
