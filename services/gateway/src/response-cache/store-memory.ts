/**
 * The in-process response cache store (`cache_params.type: local`, or `redis` without `REDIS_URL`): an LRU of at
 * most `maxEntries` entries, each expiring after its ttl. Per instance: other instances do not see its entries.
 */
import type { Clock } from "../time/clock.js";
import type { CachedAnswer, CacheStore } from "./types.js";

interface Slot {
  json: string;
  expiresAt: number;
}

/** An LRU of serialised entries (a Map keeps insertion order: the first key is the least recently used). */
export class MemoryCacheStore implements CacheStore {
  readonly kind = "local";
  private readonly slots = new Map<string, Slot>();

  /** @param maxEntries entries kept at most; the least recently used goes first. */
  constructor(
    private readonly maxEntries: number,
    private readonly clock: Clock,
  ) {}

  async get(key: string): Promise<CachedAnswer | undefined> {
    const slot = this.slots.get(key);
    if (slot === undefined) return undefined;
    this.slots.delete(key);
    if (slot.expiresAt <= this.clock.now()) return undefined;
    this.slots.set(key, slot);
    return JSON.parse(slot.json) as CachedAnswer;
  }

  async set(key: string, json: string, ttlSeconds: number): Promise<void> {
    this.slots.delete(key);
    this.slots.set(key, { json, expiresAt: this.clock.now() + ttlSeconds * 1000 });
    while (this.slots.size > this.maxEntries) {
      const oldest = this.slots.keys().next().value;
      if (oldest === undefined) break;
      this.slots.delete(oldest);
    }
  }

  /** Entries held (expired ones not yet evicted included). */
  get size(): number {
    return this.slots.size;
  }
}
