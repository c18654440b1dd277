/**
 * The {@link KeyAuthenticator} over Postgres, built to keep the database off the hot path:
 *
 * - Known keys are served from an in-process cache. While the invalidation bus has delivered every instance's
 *   messages without a break since an entry was read ({@link InvalidationBus.deliveringSince}), the messages
 *   keep it current: it is refreshed in the background after `trustedRefreshAfterMs` (60 s) and before
 *   answering after `trustedMaxStaleMs` (120 s), bounds that matter only for changes made in the database
 *   behind the gateway's back. Otherwise (Redis down, the subscriber reconnected since, several workers without
 *   Redis) an entry older than `refreshAfterMs` (1 s) is still served while a background refresh runs, and one
 *   older than `maxStaleMs` (1.5 s) is refreshed before answering. The caller waits for such a refresh at most
 *   `knownKeyWaitMs` (250 ms) and then gets the cached record (stale-while-revalidate): a database that hangs
 *   (packets dropped) never stalls a known key. Defaults: `CACHE_AGES` in `cache/freshness.ts`. Background
 *   refreshes are gathered for 20 ms and read in one query (`token = ANY($1)`), so many distinct keys in use
 *   cost one database round trip per batch, not one per request.
 * - Changes arrive through the {@link InvalidationBus} with the new state in the message (a revoked key, new
 *   limits, a user's new budget) and are applied to the cache without a query, so an instance cut off from
 *   Postgres refuses a revoked key as soon as the message arrives. A refresh that read the database before a
 *   message was applied never overwrites what the message said, and a revocation is never undone.
 * - A presented key that does not have a key's format (`looksLikeVirtualKey`) is refused without a lookup.
 *   Unknown keys are remembered (at most `maxEntries` of them, oldest dropped first): while the bus has
 *   delivered without a break since the lookup, for `trustedNegativeTtlMs` (60 s), since a key made on any
 *   instance is published on the bus and removes its hash from every instance's negative cache; otherwise for
 *   `negativeTtlMs` (1 s). A flood of distinct bogus keys is bounded by the auth plugin's per-source failure
 *   limit (`auth/failure-limiter.ts`): for a source over it, {@link CachedKeyAuthenticator.authenticateWhileLimited}
 *   looks up only keys the {@link KnownKeyFilter} says may exist (`keys/known-keys.ts`).
 * - Database outage (a failed query, or one that did not answer within the wait): keys already known keep
 *   working from their last record and never wait on the database (it is probed in the background at most
 *   once per `outageBackoffMs`); unknown keys are still looked up (so a key made just before is accepted as
 *   soon as the database is back), waiting at most `unknownKeyWaitMs` (2 s), and get 503 "the key store is
 *   unreachable", never 500.
 */
import type { FastifyBaseLogger } from "fastify";
import type pg from "pg";
import type { KeyAuthenticator, VirtualKeyAuth } from "../auth/types.js";
import {
  busCovers,
  CACHE_AGES,
  newer,
  setBounded,
  sharedQuery,
  TIMED_OUT,
  waitAtMost,
} from "../cache/freshness.js";
import type { InvalidationBus, InvalidationMessage } from "../cache/types.js";
import {
  MEMBERSHIP_COLUMNS,
  type MembershipRecord,
  membershipFromRow,
  TEAM_COLUMNS,
  type TeamRecord,
  teamFromRow,
} from "../teams/records.js";
import type { Clock } from "../time/clock.js";
import { USER_COLUMNS, type UserRecord, userFromRow } from "../users/records.js";
import { type KeyParts, keyAuth, refuseUnusable, storeUnavailable } from "./key-auth.js";
import { hashKey, looksLikeVirtualKey } from "./key-material.js";
import { KnownKeyFilter, type KnownKeyFilterOptions } from "./known-keys.js";
import { KEY_COLUMNS, type KeyRecord, keyFromRow } from "./records.js";

/** Tuning of the key cache; all times in ms of real (monotonic) time, not the injected clock. */
export interface KeyCacheSettings {
  /**
   * Age after which a served entry the bus may not have kept current is refreshed in the background.
   * Default 1000.
   */
  refreshAfterMs?: number;
  /**
   * Age after which an entry the bus may not have kept current is refreshed before answering (the bound on
   * revocation delay while change messages can be lost). Default 1500.
   */
  maxStaleMs?: number;
  /**
   * Age after which an entry the bus has kept current (it delivered without a break since the entry was read)
   * is refreshed in the background: the bound on seeing a change made in the database directly. Default 60 000.
   */
  trustedRefreshAfterMs?: number;
  /** Age after which such an entry is refreshed before answering. Default 120 000. */
  trustedMaxStaleMs?: number;
  /** How long an unknown key is remembered as unknown while the bus may have missed a message. Default 1000. */
  negativeTtlMs?: number;
  /**
   * How long an unknown key is remembered while the bus has delivered without a break since it was looked up
   * (a key made meanwhile would have been announced). Default 60 000.
   */
  trustedNegativeTtlMs?: number;
  /** After a failed query, how long before a cached key probes the database again. Default 2000. */
  outageBackoffMs?: number;
  /** Most keys cached (least recently refreshed dropped first); the same bound for unknown keys. Default 100 000. */
  maxEntries?: number;
  /** How long a known key's caller waits for a due refresh before the cached record is served. Default 250. */
  knownKeyWaitMs?: number;
  /** How long an unknown key's caller waits for the database before a 503. Default 2000. */
  unknownKeyWaitMs?: number;
  /** Tuning of the filter of existing keys consulted for sources over their failure limit. */
  knownKeys?: Pick<KnownKeyFilterOptions, "graceIntervalMs" | "reloadEveryMs">;
}

export interface KeyAuthenticatorOptions extends KeyCacheSettings {
  pool: pg.Pool;
  /** Business time: expiry and budget periods. */
  clock: Clock;
  bus: InvalidationBus;
  log: FastifyBaseLogger;
}

/** A cached key: its records (`KeyParts`), when they were read, and the auth context built from them. */
interface CacheEntry extends KeyParts {
  /** performance.now() when the query that produced this entry started; -Infinity = must refresh. */
  fetchedAt: number;
  /** The auth context built from this entry, reused until a budget period ends. */
  auth: VirtualKeyAuth | null;
  /** Clock time until which {@link CacheEntry.auth} is valid. */
  authValidUntil: number;
}

const SELECT_KEYS = `SELECT ${KEY_COLUMNS.map((c) => `k.${c}`).join(", ")},
  ${USER_COLUMNS.map((c) => `u.${c} AS u_${c}`).join(", ")},
  ${TEAM_COLUMNS.map((c) => `t.${c} AS t_${c}`).join(", ")},
  ${MEMBERSHIP_COLUMNS.map((c) => `m.${c} AS m_${c}`).join(", ")}
FROM keys k LEFT JOIN users u ON u.user_id = k.user_id
  LEFT JOIN teams t ON t.team_id = k.team_id
  LEFT JOIN team_memberships m ON m.team_id = k.team_id AND m.user_id = k.user_id`;
const LOOKUP_SQL = `${SELECT_KEYS} WHERE k.token = $1`;
const BATCH_LOOKUP_SQL = `${SELECT_KEYS} WHERE k.token = ANY($1)`;

/** How long background refreshes are gathered before their one query, ms. */
const REFRESH_BATCH_DELAY_MS = 20;
/** Keys read by one background refresh query, at most. */
const REFRESH_BATCH_MAX = 500;

/** Caching, invalidation-aware virtual-key lookup; see the module comment. */
export class CachedKeyAuthenticator implements KeyAuthenticator {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly unknown = new Map<string, number>();
  private readonly inflight = new Map<string, Promise<CacheEntry | null>>();
  /** Change messages about keys that were not cached but being read; merged into what the read returns. */
  private readonly heardDuringRead = new Map<string, KeyRecord>();
  /** Keys due for a background refresh, read together by the next batch. */
  private readonly due = new Set<string>();
  private dueTimer: NodeJS.Timeout | undefined;
  /** Incremented by every invalidation; a query that saw it change is not trusted as fresh. */
  private epoch = 0;
  private dbDownUntil = 0;
  private dbDown = false;
  private readonly refreshAfterMs: number;
  private readonly maxStaleMs: number;
  private readonly trustedRefreshAfterMs: number;
  private readonly trustedMaxStaleMs: number;
  private readonly negativeTtlMs: number;
  private readonly trustedNegativeTtlMs: number;
  private readonly outageBackoffMs: number;
  private readonly maxEntries: number;
  private readonly knownKeyWaitMs: number;
  private readonly unknownKeyWaitMs: number;
  /** Which keys exist, for sources over their failure limit. */
  readonly known: KnownKeyFilter;

  constructor(private readonly options: KeyAuthenticatorOptions) {
    this.refreshAfterMs = options.refreshAfterMs ?? CACHE_AGES.refreshAfterMs;
    this.maxStaleMs = options.maxStaleMs ?? CACHE_AGES.maxStaleMs;
    this.trustedRefreshAfterMs = options.trustedRefreshAfterMs ?? CACHE_AGES.trustedRefreshAfterMs;
    this.trustedMaxStaleMs = options.trustedMaxStaleMs ?? CACHE_AGES.trustedMaxStaleMs;
    this.negativeTtlMs = options.negativeTtlMs ?? 1000;
    this.trustedNegativeTtlMs = options.trustedNegativeTtlMs ?? CACHE_AGES.trustedRefreshAfterMs;
    this.outageBackoffMs = options.outageBackoffMs ?? 2000;
    this.maxEntries = options.maxEntries ?? 100_000;
    this.knownKeyWaitMs = options.knownKeyWaitMs ?? 250;
    this.unknownKeyWaitMs = options.unknownKeyWaitMs ?? 2000;
    this.known = new KnownKeyFilter({
      pool: options.pool,
      bus: options.bus,
      log: options.log,
      ...options.knownKeys,
    });
    options.bus.subscribe((message) => this.onInvalidation(message));
  }

  /**
   * Resolves a presented `sk-…` key; `keyHash` is its SHA-256 hex when the caller has it (not hashed again).
   * @returns the caller's context, or null for a key that does not exist.
   * @throws GatewayError 401 (`invalid_api_key`) when revoked, 401 `expired_key` when past `expires` per the
   *   clock, 503 `key_store_unreachable` when the key is not cached and the database does not answer within
   *   `unknownKeyWaitMs`.
   */
  async authenticate(presentedKey: string, keyHash?: string): Promise<VirtualKeyAuth | null> {
    if (!looksLikeVirtualKey(presentedKey)) return null;
    const hash = keyHash ?? hashKey(presentedKey);
    const entry = await this.lookup(hash);
    return entry === null ? null : this.toAuth(entry);
  }

  /**
   * Like {@link authenticate}, for a caller whose source is over its authentication-failure limit: a key this
   * instance has cached or remembers as unknown is answered as usual, any other is looked up only when the
   * {@link KnownKeyFilter} says a key with its hash may exist (no query per bogus key); undefined when it does not.
   * @throws as {@link authenticate}.
   */
  async authenticateWhileLimited(
    presentedKey: string,
    keyHash?: string,
  ): Promise<VirtualKeyAuth | null | undefined> {
    if (!looksLikeVirtualKey(presentedKey)) return null;
    const hash = keyHash ?? hashKey(presentedKey);
    if (this.entries.has(hash)) return this.authenticate(presentedKey, hash);
    if (this.knownUnknown(hash, performance.now())) return null;
    return (await this.known.mayExist(hash)) ? this.authenticate(presentedKey, hash) : undefined;
  }

  /** Whether `hash` is remembered as unknown and that memory is still within its age. */
  private knownUnknown(hash: string, now: number): boolean {
    const since = this.unknown.get(hash);
    if (since === undefined) return false;
    const ttl = busCovers(this.options.bus, since) ? this.trustedNegativeTtlMs : this.negativeTtlMs;
    return now - since < ttl;
  }

  /**
   * Applies a key's new state (from a change message): the cached record is replaced when the message is at
   * least as new. A key not cached is left to its next lookup.
   */
  applyKey(key: KeyRecord): void {
    this.unknown.delete(key.token);
    const entry = this.entries.get(key.token);
    if (entry === undefined) {
      // Not cached (a new key, announced so that it leaves the unknown cache): a read of it in flight merges
      // this state when it lands; other keys' reads are not affected (no epoch bump).
      if (this.inflight.has(key.token)) this.heardDuringRead.set(key.token, key);
      return;
    }
    this.epoch += 1;
    entry.key = newer(key, entry.key, true);
    entry.auth = null;
  }

  /** Applies a user's new state to every cached key of that user. */
  applyUser(user: UserRecord): void {
    this.epoch += 1;
    for (const entry of this.entries.values()) {
      if (entry.key.userId !== user.userId) continue;
      entry.user = entry.user === null ? user : newer(user, entry.user, true);
      entry.auth = null;
    }
  }

  /** Applies a team's new state (limits, models, `blocked`) to every cached key of that team. */
  applyTeam(team: TeamRecord): void {
    this.epoch += 1;
    for (const entry of this.entries.values()) {
      if (entry.key.teamId !== team.teamId) continue;
      entry.team = entry.team === null ? team : newer(team, entry.team, true);
      entry.auth = null;
    }
  }

  /** Applies a membership's new state (or its deletion) to the cached keys of that user in that team. */
  applyMember(member: MembershipRecord, deleted: boolean): void {
    this.epoch += 1;
    for (const entry of this.entries.values()) {
      if (entry.key.teamId !== member.teamId || entry.key.userId !== member.userId) continue;
      if (deleted) entry.member = null;
      else entry.member = entry.member === null ? member : newer(member, entry.member, true);
      entry.auth = null;
    }
  }

  /** Number of keys cached (for tests and diagnostics). */
  get size(): number {
    return this.entries.size;
  }

  private onInvalidation(message: InvalidationMessage): void {
    if (message.kind === "key") this.applyKey(message.key);
    else if (message.kind === "user") this.applyUser(message.user);
    else if (message.kind === "team") this.applyTeam(message.team);
    else if (message.kind === "member") this.applyMember(message.member, message.deleted);
  }

  private async lookup(hash: string): Promise<CacheEntry | null> {
    const now = performance.now();
    const entry = this.entries.get(hash);
    if (entry !== undefined) {
      const age = now - entry.fetchedAt;
      const trusted = busCovers(this.options.bus, entry.fetchedAt);
      if (age < (trusted ? this.trustedRefreshAfterMs : this.refreshAfterMs)) return entry;
      if (age < (trusted ? this.trustedMaxStaleMs : this.maxStaleMs) || this.dbDown) {
        // During an outage, probe at most once per backoff window and never make the caller wait.
        if (now >= this.dbDownUntil) this.refreshSoon(hash);
        return entry;
      }
      try {
        const fresh = await waitAtMost(this.load(hash), this.knownKeyWaitMs);
        if (fresh !== TIMED_OUT) return fresh;
        this.noteOutage(new Error(`no answer within ${this.knownKeyWaitMs} ms`));
      } catch {
        // noted by query(); serve the cached record
      }
      return this.entries.get(hash) ?? entry;
    }
    if (this.knownUnknown(hash, now)) return null;
    let found: CacheEntry | null | typeof TIMED_OUT;
    try {
      found = await waitAtMost(this.load(hash), this.unknownKeyWaitMs);
    } catch (error) {
      throw storeUnavailable(error);
    }
    if (found === TIMED_OUT) {
      const error = new Error(`no answer within ${this.unknownKeyWaitMs} ms`);
      this.noteOutage(error);
      throw storeUnavailable(error);
    }
    return found;
  }

  /**
   * Queues a background refresh: the due keys of the next {@link REFRESH_BATCH_DELAY_MS} are read in one query
   * (`token = ANY($1)`, at most {@link REFRESH_BATCH_MAX} per query), so with many distinct keys in use the
   * refreshes cost one round trip per batch, not one per request.
   */
  private refreshSoon(hash: string): void {
    if (this.inflight.has(hash)) return;
    this.due.add(hash);
    if (this.dueTimer !== undefined) return;
    this.dueTimer = setTimeout(() => {
      this.dueTimer = undefined;
      this.refreshDue().catch(() => undefined);
    }, REFRESH_BATCH_DELAY_MS);
    this.dueTimer.unref();
  }

  private async refreshDue(): Promise<void> {
    while (this.due.size > 0) {
      const hashes: string[] = [];
      for (const hash of this.due) {
        this.due.delete(hash);
        if (!this.inflight.has(hash)) hashes.push(hash);
        if (hashes.length >= REFRESH_BATCH_MAX) break;
      }
      if (hashes.length === 0) return;
      const started = performance.now();
      const epoch = this.epoch;
      const batch = this.options.pool.query(BATCH_LOOKUP_SQL, [hashes]).then(
        (result) => {
          this.noteRecovery();
          const rows = new Map(result.rows.map((row) => [row.token as string, row]));
          for (const hash of hashes) this.remember(hash, rows.get(hash), started, epoch);
        },
        (error: unknown) => {
          this.noteOutage(error);
          throw error;
        },
      );
      // A caller that must wait for one of these keys meanwhile shares the batch instead of a query of its own.
      for (const hash of hashes) {
        const shared = batch
          .then(() => this.entries.get(hash) ?? null)
          .finally(() => this.inflight.delete(hash));
        shared.catch(() => undefined);
        this.inflight.set(hash, shared);
      }
      await batch;
    }
  }

  /** One query per hash at a time; concurrent callers share it. */
  private load(hash: string): Promise<CacheEntry | null> {
    return sharedQuery(this.inflight, hash, () => this.query(hash));
  }

  private async query(hash: string): Promise<CacheEntry | null> {
    const started = performance.now();
    const epoch = this.epoch;
    let rows: Record<string, unknown>[];
    try {
      rows = (await this.options.pool.query(LOOKUP_SQL, [hash])).rows;
    } catch (error) {
      this.noteOutage(error);
      throw error;
    }
    this.noteRecovery();
    return this.remember(hash, rows[0], started, epoch);
  }

  /**
   * Caches what a query read for `hash` (`row` undefined: no such key), started at `started` (performance.now())
   * while the invalidation epoch was `epoch`. Returns the entry, or null for a key that does not exist.
   */
  private remember(
    hash: string,
    row: Record<string, unknown> | undefined,
    started: number,
    epoch: number,
  ): CacheEntry | null {
    const heard = this.heardDuringRead.get(hash);
    this.heardDuringRead.delete(hash);
    if (row === undefined) {
      this.entries.delete(hash);
      // A key announced while the read ran exists now: not remembered as unknown.
      if (heard === undefined) setBounded(this.unknown, hash, started, this.maxEntries);
      return null;
    }
    this.unknown.delete(hash);
    // A change message applied while the query ran may postdate what it read: keep the message's state on a
    // tie, and refresh again next time.
    const raced = epoch !== this.epoch;
    const cached = this.entries.get(hash);
    const readUser = row.u_user_id === null ? null : userFromRow(row, "u_");
    const readTeam = row.t_team_id == null ? null : teamFromRow(row, "t_");
    const readMember = row.m_member_key == null ? null : membershipFromRow(row, "m_");
    const entry: CacheEntry = {
      key: newer(heard ?? cached?.key, keyFromRow(row), raced || heard !== undefined),
      user: readUser === null ? null : newer(cached?.user, readUser, raced),
      team: readTeam === null ? null : newer(cached?.team, readTeam, raced),
      member: readMember === null ? null : newer(cached?.member, readMember, raced),
      fetchedAt: raced ? Number.NEGATIVE_INFINITY : started,
      auth: null,
      authValidUntil: 0,
    };
    setBounded(this.entries, hash, entry, this.maxEntries);
    return entry;
  }

  private noteOutage(error: unknown): void {
    this.dbDownUntil = performance.now() + this.outageBackoffMs;
    if (!this.dbDown) {
      this.dbDown = true;
      this.options.log.warn(
        { err: error instanceof Error ? error.message : String(error), cachedKeys: this.entries.size },
        "key store: Postgres unreachable; serving cached keys, refusing unknown keys with 503",
      );
    }
  }

  private noteRecovery(): void {
    if (this.dbDown) {
      this.dbDown = false;
      this.dbDownUntil = 0;
      this.options.log.info("key store: Postgres reachable again");
    }
  }

  private toAuth(entry: CacheEntry): VirtualKeyAuth {
    const now = this.options.clock.now();
    refuseUnusable(entry, now);
    if (entry.auth !== null && now < entry.authValidUntil) return entry.auth;
    const { auth, validUntil } = keyAuth(entry, now);
    entry.auth = auth;
    entry.authValidUntil = validUntil;
    return auth;
  }
}
