/**
 * The exact response cache (LiteLLM's `litellm_settings.cache`; docs/cache.md): its settings, its store (Redis
 * when the gateway has `REDIS_URL` and `cache_params.type` is `redis`, else an in-process LRU), its metrics and
 * the config version of each model group. The pipeline uses it in three steps: `steps/cache-lookup.ts` (exact,
 * before admission), `steps/cache-semantic-lookup.ts` (after admission and the input guard) and
 * `steps/cache-store.ts` (after the output guard); a hit is answered by `steps/cache-replay.ts`.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Registry } from "prom-client";
import type { RedisConnection } from "../cache/redis.js";
import type { ResponseCacheSettings } from "../config/cache-settings.js";
import type { Deployment } from "../config/types.js";
import type { Clock } from "../time/clock.js";
import { groupVersions } from "./key.js";
import { type ResponseCacheMetrics, responseCacheMetrics } from "./metrics.js";
import type { SemanticCache } from "./semantic/index.js";
import { MemoryCacheStore } from "./store-memory.js";
import { RedisCacheStore } from "./store-redis.js";
import type { CacheStore } from "./types.js";

/** The response cache the pipeline's cache steps use (`PipelineDeps.responseCache`). */
export interface ResponseCache {
  readonly settings: ResponseCacheSettings;
  readonly store: CacheStore;
  readonly metrics: ResponseCacheMetrics;
  readonly clock: Clock;
  /** The semantic cache (`type: postgres-semantic`), asked after an exact miss; absent for other types. */
  readonly semantic?: SemanticCache;
  /** The config version of a model group (`key.ts` {@link groupVersions}); "" for an alias without deployments. */
  groupVersion(alias: string): string;
}

/** What {@link createResponseCache} needs. */
export interface ResponseCacheOptions {
  settings: ResponseCacheSettings;
  /** The gateway's Redis connection (REDIS_URL), when it has one. */
  redis: RedisConnection | undefined;
  deployments: readonly Deployment[];
  registry: Registry;
  clock: Clock;
  log?: FastifyBaseLogger;
  /** The semantic cache (`response-cache/semantic/`), created by the caller for `type: postgres-semantic`. */
  semantic?: SemanticCache;
}

/**
 * Creates the cache; `type: redis` without a Redis connection falls back to the in-process LRU (logged).
 * `postgres-semantic` keeps its exact entries where `redis` would.
 */
export function createResponseCache(options: ResponseCacheOptions): ResponseCache {
  const { settings, redis, clock } = options;
  let store: CacheStore;
  const onRedis = settings.type !== "local";
  if (onRedis && redis !== undefined) store = new RedisCacheStore(redis);
  else {
    if (onRedis)
      options.log?.warn(
        `cache_params.type is ${settings.type} but REDIS_URL is not set: the exact response cache is per instance`,
      );
    store = new MemoryCacheStore(settings.maxEntries, clock);
  }
  const versions = groupVersions(options.deployments);
  return {
    settings,
    store,
    clock,
    ...(options.semantic === undefined ? {} : { semantic: options.semantic }),
    metrics: responseCacheMetrics(options.registry),
    groupVersion: (alias) => versions.get(alias) ?? "",
  };
}
