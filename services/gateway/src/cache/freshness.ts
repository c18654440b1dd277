/**
 * Small pieces the in-process caches of database records share (the key cache in `keys/authenticator.ts`, the
 * chat user cache in `users/directory.ts`): how old a cached record may get, which of two copies of a record
 * is newer, one query per record at a time, waiting for a query at most so long, and a size-bounded map.
 */
import type { InvalidationBus } from "./types.js";

/**
 * How old (ms of real, monotonic time since the query that read it started) a cached key or user may get; the
 * defaults of `KeyCacheSettings` and `UserDirectoryOptions`.
 *
 * Every change made through the gateway (admin API, spend) is published on the {@link InvalidationBus} with the
 * new state, so while the bus has delivered every instance's messages since a record was read, the record is
 * current without a query: it is refreshed in the background after `trustedRefreshAfterMs` (60 s) and the
 * caller waits for a refresh only after `trustedMaxStaleMs` (120 s); these bound only changes made in the
 * database behind the gateway's back (SQL by an operator). A record read before the bus's current unbroken
 * delivery began (Redis down, the subscriber reconnected, several workers without Redis) may have missed a
 * message: it is refreshed in the background after `refreshAfterMs` (1 s) and before answering after
 * `maxStaleMs` (1.5 s), which keeps a revocation within 2 s.
 */
export const CACHE_AGES = {
  refreshAfterMs: 1000,
  maxStaleMs: 1500,
  trustedRefreshAfterMs: 60_000,
  trustedMaxStaleMs: 120_000,
} as const;

/**
 * Whether the bus has delivered every instance's messages without a break since `fetchedAt` (performance.now()
 * when the record's query started), so the record can only have missed changes made outside the gateway.
 */
export function busCovers(bus: InvalidationBus, fetchedAt: number): boolean {
  const since = bus.deliveringSince();
  return since !== undefined && since <= fetchedAt;
}

/**
 * One query per record at a time: the query already running for `key` in `inflight`, else a new one from
 * `start`, kept in `inflight` until it settles, so concurrent callers share it. Rejects as the query does.
 */
export function sharedQuery<K, V>(inflight: Map<K, Promise<V>>, key: K, start: () => Promise<V>): Promise<V> {
  const pending = inflight.get(key);
  if (pending !== undefined) return pending;
  const promise = start().finally(() => inflight.delete(key));
  inflight.set(key, promise);
  return promise;
}

/** What {@link waitAtMost} resolves to when the time ran out first. */
export const TIMED_OUT = Symbol("timed out");

/** Resolves with `promise`'s value, or {@link TIMED_OUT} after `ms`; rejects as `promise` does. */
export function waitAtMost<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The newer of a cached and a read record (by `updatedAt`, epoch ms); a revocation is final, and
 * `preferCached` wins ties (a change message applied while a query ran may postdate what it read).
 */
export function newer<T extends { updatedAt: number; revokedAt?: number | null }>(
  cached: T | null | undefined,
  read: T,
  preferCached: boolean,
): T {
  if (cached === null || cached === undefined) return read;
  if (cached.revokedAt != null && read.revokedAt == null) return cached;
  if (read.revokedAt != null && cached.revokedAt == null) return read;
  if (cached.updatedAt > read.updatedAt || (preferCached && cached.updatedAt === read.updatedAt))
    return cached;
  return read;
}

/** Bounded map: past `max` entries the oldest inserted one goes. */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) {
    const oldest = map.keys().next();
    if (oldest.done !== true) map.delete(oldest.value);
  }
}
