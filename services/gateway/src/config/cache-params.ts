/**
 * LiteLLM's response cache switches (LiteLLM docs, proxy/caching.md): `litellm_settings.cache: true` turns the
 * cache on, `litellm_settings.cache_params` tunes it. Read into {@link ResponseCacheSettings}; a value that
 * cannot be used is a problem naming its path, a LiteLLM key the gateway does not use a warning.
 *
 * `cache_params` keys read: `type` (`redis` | `local`; LiteLLM's `redis-semantic`, `qdrant-semantic`, `s3`, … are
 * refused), `ttl` (seconds), `namespace`, `supported_call_types` (LiteLLM's call type names), `mode`
 * (`default_on` | `default_off`), and the gateway's own `scope` (`tenant` | `global`), `max_entry_bytes` and
 * `max_entries`. The Redis address keys (`host`, `port`, `password`, …) are ignored: the cache uses `REDIS_URL`.
 */
import { z } from "zod";
import {
  CACHEABLE_CALL_TYPES,
  type CacheableCallType,
  DEFAULT_CACHE_TTL_SECONDS,
  DEFAULT_MAX_ENTRIES,
  DEFAULT_MAX_ENTRY_BYTES,
  type ResponseCacheSettings,
} from "./cache-settings.js";
import type { KeySet } from "./litellm-keys.js";
import { describe, isMapping, type Path } from "./messages.js";
import type { Report } from "./report.js";

const useRedisUrl = "the cache uses the gateway's REDIS_URL";

/** `cache_params`' keys. */
const cacheParamsKeys: KeySet = {
  used: [
    "type",
    "ttl",
    "namespace",
    "supported_call_types",
    "mode",
    "scope",
    "max_entry_bytes",
    "max_entries",
  ],
  ignored: {
    host: useRedisUrl,
    port: useRedisUrl,
    password: useRedisUrl,
    username: useRedisUrl,
    redis_url: useRedisUrl,
    ssl: useRedisUrl,
    redis_startup_nodes: useRedisUrl,
    service_name: useRedisUrl,
    sentinel_nodes: useRedisUrl,
  },
  unsupported: {
    similarity_threshold: "the semantic cache is not implemented yet; remove it",
    redis_semantic_cache_embedding_model: "the semantic cache is not implemented yet; remove it",
    s3_bucket_name: "only type redis or local is implemented",
  },
};

/** LiteLLM's sync call type names, mapped to the async ones the gateway records. */
const SYNC_NAMES: Readonly<Record<string, CacheableCallType>> = {
  completion: "acompletion",
  text_completion: "atext_completion",
  embedding: "aembedding",
  responses: "aresponses",
};

const callTypeNames = [...CACHEABLE_CALL_TYPES, ...Object.keys(SYNC_NAMES)] as [string, ...string[]];

const cacheParamsSchema = z.object({
  type: z.enum(["redis", "local"]).optional(),
  ttl: z.number().positive().optional(),
  namespace: z
    .string()
    .regex(/^[\w.:-]{1,64}$/, "must be 1 to 64 letters, digits, _, ., : or -")
    .optional(),
  supported_call_types: z.array(z.enum(callTypeNames)).optional(),
  mode: z.enum(["default_on", "default_off"]).optional(),
  scope: z.enum(["tenant", "global"]).optional(),
  max_entry_bytes: z.number().int().positive().optional(),
  max_entries: z.number().int().positive().optional(),
});

/**
 * Reads `litellm_settings.cache` and `cache_params`.
 * @returns the settings when `cache` is true (and `cache_params` is usable), else undefined; problems and warnings
 *   go to `report`.
 */
export function readCacheSettings(
  report: Report,
  cache: boolean | undefined,
  params: unknown,
): ResponseCacheSettings | undefined {
  const at: Path = ["litellm_settings", "cache_params"];
  let parsed: z.output<typeof cacheParamsSchema> = {};
  if (params !== undefined && params !== null) {
    if (!isMapping(params)) {
      report.problem(at, `expected a mapping (type, ttl, namespace, …), got ${describe(params)}`);
      return undefined;
    }
    report.checkKeys(params, at, cacheParamsKeys);
    const result = report.parse(cacheParamsSchema, params, at);
    if (result === undefined) return undefined;
    parsed = result;
  }
  if (cache !== true) {
    if (params !== undefined && params !== null)
      report.warn(at, "cache_params is ignored while litellm_settings.cache is not true");
    return undefined;
  }
  const callTypes = parsed.supported_call_types?.map(
    (name) => SYNC_NAMES[name] ?? (name as CacheableCallType),
  );
  return {
    type: parsed.type ?? "redis",
    ttlSeconds: parsed.ttl ?? DEFAULT_CACHE_TTL_SECONDS,
    namespace: parsed.namespace ?? "",
    supportedCallTypes: [...new Set(callTypes ?? CACHEABLE_CALL_TYPES)],
    mode: parsed.mode ?? "default_on",
    scope: parsed.scope ?? "tenant",
    maxEntryBytes: parsed.max_entry_bytes ?? DEFAULT_MAX_ENTRY_BYTES,
    maxEntries: parsed.max_entries ?? DEFAULT_MAX_ENTRIES,
  };
}
