/**
 * The {@link KeyAuthenticator} over Postgres, built to keep the database off the hot path:
 *
 * - Known keys are served from an in-process cache. An entry older than `refreshAfterMs` (1 s) is still served
 *   while a background refresh runs; one older than `maxStaleMs` (1.5 s) is refreshed before answering. So a
 *   change in the database (revocation on another instance) is seen within `maxStaleMs` even without any
 *   message, and at once when the {@link InvalidationBus} delivers `key:<hash>` or `user:<id>`.
 * - Unknown keys are remembered for `negativeTtlMs` (1 s), so a flood of bad keys costs one query per key per
 *   second at most.
 * - Database outage: keys already known keep working from their last record (stale) and never wait on the
 *   database (it is probed in the background at most once per `outageBackoffMs`); unknown keys are still
 *   looked up (so a key made just before is accepted as soon as the database is back) and get 503, never
 *   500, when the lookup fails.
 */
import type { FastifyBaseLogger } from "fastify";
import type pg from "pg";
import type { KeyAuthenticator, VirtualKeyAuth } from "../auth/types.js";
import type { InvalidationBus, InvalidationMessage } from "../cache/types.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Clock } from "../time/clock.js";
import { currentPeriod } from "../users/budget-period.js";
import { limitSubject, USER_COLUMNS, type UserRecord, userFromRow } from "../users/records.js";
import { hashKey, looksLikeVirtualKey } from "./key-material.js";
import { KEY_COLUMNS, type KeyRecord, keyFromRow } from "./records.js";

/** Tuning of the key cache; all times in ms of real (monotonic) time, not the injected clock. */
export interface KeyCacheSettings {
  /** Age after which a served entry is refreshed in the background. Default 1000. */
  refreshAfterMs?: number;
  /** Age after which an entry is refreshed before answering (bound on revocation delay). Default 1500. */
  maxStaleMs?: number;
  /** How long an unknown key is remembered as unknown. Default 1000. */
  negativeTtlMs?: number;
  /** After a failed query, how long before a cached key probes the database again. Default 2000. */
  outageBackoffMs?: number;
  /** Most keys cached (least recently refreshed dropped first); the same bound for unknown keys. Default 100 000. */
  maxEntries?: number;
}

export interface KeyAuthenticatorOptions extends KeyCacheSettings {
  pool: pg.Pool;
  /** Business time: expiry and budget periods. */
  clock: Clock;
  bus: InvalidationBus;
  log: FastifyBaseLogger;
}

interface CacheEntry {
  key: KeyRecord;
  user: UserRecord | null;
  /** performance.now() when the query that produced this entry started; -Infinity = must refresh. */
  fetchedAt: number;
  /** The auth context built from this entry, reused until a budget period ends. */
  auth: VirtualKeyAuth | null;
  /** Clock time until which {@link CacheEntry.auth} is valid. */
  authValidUntil: number;
}

const LOOKUP_SQL = `SELECT ${KEY_COLUMNS.map((c) => `k.${c}`).join(", ")},
  ${USER_COLUMNS.map((c) => `u.${c} AS u_${c}`).join(", ")}
FROM keys k LEFT JOIN users u ON u.user_id = k.user_id
WHERE k.token = $1`;

/** 503 for an unknown key while the database is unreachable (the key may exist; we cannot tell). */
function storeUnavailable(cause: unknown): GatewayError {
  return new GatewayError(
    503,
    "The key store is unreachable, so this key cannot be checked now. Try again shortly.",
    {
      type: "service_unavailable_error",
      cause,
    },
  );
}

function revoked(): GatewayError {
  return new GatewayError(401, "This API key was revoked. Make a new key in the console.", {
    type: "authentication_error",
    code: "invalid_api_key",
  });
}

function expired(expires: number): GatewayError {
  return new GatewayError(
    401,
    `This API key expired at ${new Date(expires).toISOString()}. Make a new key in the console.`,
    { type: "expired_key", code: "expired_key" },
  );
}

/** Bounded map: past `max` entries the oldest inserted one goes. */
function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) {
    const oldest = map.keys().next();
    if (oldest.done !== true) map.delete(oldest.value);
  }
}

/** Caching, invalidation-aware virtual-key lookup; see the module comment. */
export class CachedKeyAuthenticator implements KeyAuthenticator {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly unknown = new Map<string, number>();
  private readonly inflight = new Map<string, Promise<CacheEntry | null>>();
  /** Incremented by every invalidation; a query that saw it change is not trusted as fresh. */
  private epoch = 0;
  private dbDownUntil = 0;
  private dbDown = false;
  private readonly refreshAfterMs: number;
  private readonly maxStaleMs: number;
  private readonly negativeTtlMs: number;
  private readonly outageBackoffMs: number;
  private readonly maxEntries: number;

  constructor(private readonly options: KeyAuthenticatorOptions) {
    this.refreshAfterMs = options.refreshAfterMs ?? 1000;
    this.maxStaleMs = options.maxStaleMs ?? 1500;
    this.negativeTtlMs = options.negativeTtlMs ?? 1000;
    this.outageBackoffMs = options.outageBackoffMs ?? 2000;
    this.maxEntries = options.maxEntries ?? 100_000;
    options.bus.subscribe((message) => this.onInvalidation(message));
  }

  /**
   * Resolves a presented `sk-…` key.
   * @returns the caller's context, or null for a key that does not exist.
   * @throws GatewayError 401 (`invalid_api_key`) when revoked, 401 `expired_key` when past `expires` per the
   *   clock, 503 when the key is not cached and the database is unreachable.
   */
  async authenticate(presentedKey: string): Promise<VirtualKeyAuth | null> {
    if (!looksLikeVirtualKey(presentedKey)) return null;
    const hash = hashKey(presentedKey);
    const entry = await this.lookup(hash);
    return entry === null ? null : this.toAuth(entry);
  }

  /** Marks a key's cached record for refresh before its next use (local revocation, update). */
  invalidateKey(hash: string): void {
    this.epoch += 1;
    this.unknown.delete(hash);
    const entry = this.entries.get(hash);
    if (entry !== undefined) entry.fetchedAt = Number.NEGATIVE_INFINITY;
  }

  /** Marks every cached key of a user for refresh (limits or budget changed). */
  invalidateUser(userId: string): void {
    this.epoch += 1;
    for (const entry of this.entries.values()) {
      if (entry.key.userId === userId) entry.fetchedAt = Number.NEGATIVE_INFINITY;
    }
  }

  /** Number of keys cached (for tests and diagnostics). */
  get size(): number {
    return this.entries.size;
  }

  private onInvalidation(message: InvalidationMessage): void {
    if (message.startsWith("key:")) this.invalidateKey(message.slice(4));
    else if (message.startsWith("user:")) this.invalidateUser(message.slice(5));
  }

  private async lookup(hash: string): Promise<CacheEntry | null> {
    const now = performance.now();
    const entry = this.entries.get(hash);
    if (entry !== undefined) {
      const age = now - entry.fetchedAt;
      if (age < this.refreshAfterMs) return entry;
      if (age < this.maxStaleMs || this.dbDown) {
        // During an outage, probe at most once per backoff window and never make the caller wait.
        if (now >= this.dbDownUntil) this.load(hash).catch(() => undefined);
        return entry;
      }
      try {
        return await this.load(hash);
      } catch {
        return entry;
      }
    }
    const unknownSince = this.unknown.get(hash);
    if (unknownSince !== undefined && now - unknownSince < this.negativeTtlMs) return null;
    try {
      return await this.load(hash);
    } catch (error) {
      throw storeUnavailable(error);
    }
  }

  /** One query per hash at a time; concurrent callers share it. */
  private load(hash: string): Promise<CacheEntry | null> {
    const pending = this.inflight.get(hash);
    if (pending !== undefined) return pending;
    const promise = this.query(hash).finally(() => this.inflight.delete(hash));
    this.inflight.set(hash, promise);
    return promise;
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
    const row = rows[0];
    if (row === undefined) {
      this.entries.delete(hash);
      setBounded(this.unknown, hash, started, this.maxEntries);
      return null;
    }
    this.unknown.delete(hash);
    const entry: CacheEntry = {
      key: keyFromRow(row),
      user: row.u_user_id === null ? null : userFromRow(row, "u_"),
      // An invalidation that arrived while the query ran may postdate what it read: refresh next time.
      fetchedAt: epoch === this.epoch ? started : Number.NEGATIVE_INFINITY,
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
    const { key, user } = entry;
    if (key.revokedAt !== null) throw revoked();
    if (key.expires !== null && key.expires <= now) throw expired(key.expires);
    if (entry.auth !== null && now < entry.authValidUntil) return entry.auth;
    const subjects = [limitSubject("key", key.token, key, now, key.keyAlias)];
    if (user !== null) subjects.push(limitSubject("user", user.userId, user, now));
    const resets = [key, ...(user === null ? [] : [user])]
      .map((limits) => currentPeriod(limits, now).budgetResetAt)
      .filter((reset): reset is number => reset !== null);
    entry.auth = {
      kind: "virtual",
      keyHash: key.token,
      keyAlias: key.keyAlias,
      userId: key.userId,
      models: key.models,
      expiresAt: key.expires,
      subjects,
      metadata: key.metadata,
    };
    entry.authValidUntil = Math.min(Number.POSITIVE_INFINITY, ...resets);
    return entry.auth;
  }
}
