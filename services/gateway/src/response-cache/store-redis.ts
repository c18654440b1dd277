/**
 * The Redis response cache store (`cache_params.type: redis` on the platform's `REDIS_URL`): one string per entry,
 * `<prefix>rc:<namespace>:<scope>:<key>`, written with `SET … EX ttl`, so Redis expires entries itself and a
 * tenant's entries can be found by prefix. It uses the gateway's fail-fast connection (`cache/redis.ts`): while
 * Redis is unreachable a lookup is a miss and a write is dropped, at once, and the call goes upstream uncached.
 */
import type { RedisConnection } from "../cache/redis.js";
import type { CachedAnswer, CacheStore } from "./types.js";

/** A {@link CacheStore} on Redis. Keys handed to it are already scoped and namespaced. */
export class RedisCacheStore implements CacheStore {
  readonly kind = "redis";

  constructor(private readonly redis: RedisConnection) {}

  async get(key: string): Promise<CachedAnswer | undefined> {
    if (!this.redis.isConnected()) return undefined;
    const started = performance.now();
    try {
      const json = await this.redis.client.get(this.redis.keyPrefix + key);
      this.redis.observe("cache_get", (performance.now() - started) / 1000);
      return json === null ? undefined : (JSON.parse(json) as CachedAnswer);
    } catch (error) {
      this.redis.reportFailureIfLinkDown("cache_get", error);
      return undefined;
    }
  }

  async set(key: string, json: string, ttlSeconds: number): Promise<void> {
    if (!this.redis.isConnected()) return;
    const started = performance.now();
    try {
      await this.redis.client.set(
        this.redis.keyPrefix + key,
        json,
        "EX",
        Math.max(1, Math.round(ttlSeconds)),
      );
      this.redis.observe("cache_set", (performance.now() - started) / 1000);
    } catch (error) {
      this.redis.reportFailureIfLinkDown("cache_set", error);
    }
  }
}
