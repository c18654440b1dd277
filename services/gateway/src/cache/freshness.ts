/**
 * Small pieces the in-process caches of database records share (the key cache in `keys/authenticator.ts`, the
 * chat user cache in `users/directory.ts`): which of two copies of a record is newer, waiting for a query at
 * most so long, and a size-bounded map.
 */

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
