/**
 * The users chat calls are booked on, cached in process like keys are (`keys/authenticator.ts`), so naming a
 * user costs no query on the hot path:
 *
 * - A user seen before is served from the cache (the caller never waits). While the invalidation bus has
 *   delivered every instance's messages without a break since the entry was read, it is refreshed in the
 *   background after `trustedRefreshAfterMs` (60 s; the bound for changes made in the database directly);
 *   otherwise after `refreshAfterMs` (1 s), so the spend floor and limits stay current within about a second
 *   while change messages can be lost. Defaults: `CACHE_AGES` in `cache/freshness.ts`.
 * - Changes made through the admin API (/user/update) arrive on the {@link InvalidationBus} with the new state
 *   and replace the cached record at once; a background refresh that read older data never overwrites them.
 * - A user not seen before is provisioned the way `/user/new` does it (INSERT … ON CONFLICT DO NOTHING: an
 *   existing user is returned unchanged, a new one gets the DEFAULT_* limits and the email given), waiting at
 *   most `unknownUserWaitMs` (2 s) for the database, then 503. Concurrent calls for one user share one query.
 */
import type { FastifyBaseLogger } from "fastify";
import type pg from "pg";
import {
  busCovers,
  CACHE_AGES,
  newer,
  setBounded,
  sharedQuery,
  TIMED_OUT,
  waitAtMost,
} from "../cache/freshness.js";
import type { InvalidationBus } from "../cache/types.js";
import type { GatewayEnv } from "../config/env.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Clock } from "../time/clock.js";
import type { UserRecord } from "./records.js";
import { defaultUser, findUser, insertUserIfAbsent } from "./repository.js";

/** Options of {@link UserDirectory}; times in ms of real (monotonic) time. */
export interface UserDirectoryOptions {
  pool: pg.Pool;
  /** Business time: the first budget period of a new user starts now. */
  clock: Clock;
  bus: InvalidationBus;
  log: FastifyBaseLogger;
  /** Limits of a provisioned user (DEFAULT_USER_BUDGET, DEFAULT_BUDGET_DURATION, DEFAULT_TPM_LIMIT, DEFAULT_RPM_LIMIT). */
  userDefaults: GatewayEnv["userDefaults"];
  /** Age after which a served entry the bus may not have kept current is refreshed in the background. Default 1000. */
  refreshAfterMs?: number;
  /**
   * Age after which an entry the bus has kept current (it delivered without a break since the entry was read)
   * is refreshed in the background. Default 60 000.
   */
  trustedRefreshAfterMs?: number;
  /** How long a new user's caller waits for the database before a 503. Default 2000. */
  unknownUserWaitMs?: number;
  /** Most users cached (oldest inserted dropped first). Default 100 000. */
  maxEntries?: number;
}

interface Entry {
  user: UserRecord;
  /** performance.now() when the query that produced this entry started; -Infinity = must refresh. */
  fetchedAt: number;
}

function userStoreUnavailable(cause: unknown): GatewayError {
  return new GatewayError(
    503,
    "The user store (Postgres) is unreachable, so the chat user of this call cannot be provisioned now. Try again shortly.",
    { type: "service_unavailable_error", code: "user_store_unreachable", cause },
  );
}

/** Cached, provisioning lookup of users by id; see the module comment. */
export class UserDirectory {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<UserRecord>>();
  /** Incremented by every user change message; a query that saw it change does not win a tie. */
  private epoch = 0;
  /** The tuning options with their defaults applied. */
  private readonly tuning: Required<
    Pick<
      UserDirectoryOptions,
      "refreshAfterMs" | "trustedRefreshAfterMs" | "unknownUserWaitMs" | "maxEntries"
    >
  >;

  constructor(private readonly options: UserDirectoryOptions) {
    const {
      refreshAfterMs = CACHE_AGES.refreshAfterMs,
      trustedRefreshAfterMs = CACHE_AGES.trustedRefreshAfterMs,
      unknownUserWaitMs = 2000,
      maxEntries = 100_000,
    } = options;
    this.tuning = { refreshAfterMs, trustedRefreshAfterMs, unknownUserWaitMs, maxEntries };
    options.bus.subscribe((message) => {
      if (message.kind === "user") this.applyUser(message.user);
    });
  }

  /**
   * The user with that id, provisioned with the defaults and `email` when there is none yet (an existing user
   * is never changed).
   * @throws GatewayError 503 `user_store_unreachable` when the user is not cached and the database fails or does
   *   not answer within `unknownUserWaitMs`.
   */
  async resolve(userId: string, email: string | null): Promise<UserRecord> {
    const entry = this.entries.get(userId);
    if (entry !== undefined) {
      const { refreshAfterMs, trustedRefreshAfterMs } = this.tuning;
      const trusted = busCovers(this.options.bus, entry.fetchedAt);
      if (performance.now() - entry.fetchedAt >= (trusted ? trustedRefreshAfterMs : refreshAfterMs)) {
        this.load(userId, email).catch(() => undefined);
      }
      return entry.user;
    }
    let found: UserRecord | typeof TIMED_OUT;
    try {
      found = await waitAtMost(this.load(userId, email), this.tuning.unknownUserWaitMs);
    } catch (error) {
      throw userStoreUnavailable(error);
    }
    if (found === TIMED_OUT) {
      throw userStoreUnavailable(new Error(`no answer within ${this.tuning.unknownUserWaitMs} ms`));
    }
    return found;
  }

  /** Applies a user's new state (a change message) to the cached copy, if any. */
  applyUser(user: UserRecord): void {
    this.epoch += 1;
    const entry = this.entries.get(user.userId);
    if (entry !== undefined) entry.user = newer(user, entry.user, true);
  }

  /** Number of users cached (for tests and diagnostics). */
  get size(): number {
    return this.entries.size;
  }

  private load(userId: string, email: string | null): Promise<UserRecord> {
    return sharedQuery(this.inflight, userId, () => this.query(userId, email));
  }

  private async query(userId: string, email: string | null): Promise<UserRecord> {
    const started = performance.now();
    const epoch = this.epoch;
    const { pool, clock, userDefaults } = this.options;
    let read = await findUser(pool, userId);
    if (read === null) {
      const { user, created } = await insertUserIfAbsent(
        pool,
        defaultUser(userId, email, userDefaults),
        clock.now(),
      );
      if (created) this.options.log.info({ userId }, "chat user provisioned");
      read = user;
    }
    // A change message applied while the query ran may postdate what it read (and, for a user not cached yet,
    // had no entry to land in): keep the message's state on a tie, and read again on the next call.
    const raced = epoch !== this.epoch;
    const cached = this.entries.get(userId);
    const user = newer(cached?.user, read, raced);
    const fetchedAt = raced ? Number.NEGATIVE_INFINITY : started;
    setBounded(this.entries, userId, { user, fetchedAt }, this.tuning.maxEntries);
    return user;
  }
}
