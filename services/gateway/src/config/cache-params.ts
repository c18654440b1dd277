/**
 * LiteLLM's response cache switches (LiteLLM docs, proxy/caching.md): `litellm_settings.cache: true` turns the
 * cache on, `litellm_settings.cache_params` tunes it. Read into {@link ResponseCacheSettings}; a value that
 * cannot be used is a problem naming its path, a LiteLLM key the gateway does not use a warning.
 *
 * `cache_params` keys read: `type` (`redis` | `local` | `postgres-semantic`; LiteLLM's `redis-semantic`,
 * `qdrant-semantic`, `s3`, … are refused), `similarity_threshold` and `semantic_cache_embedding_model`
 * (`postgres-semantic` only; LiteLLM's `redis_semantic_cache_embedding_model` is read as the latter), `ttl` (seconds), `namespace`, `supported_call_types` (LiteLLM's call type names), `mode`
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
  DEFAULT_SIMILARITY_THRESHOLD,
  type ResponseCacheSettings,
  type SemanticCacheSettings,
} from "./cache-settings.js";
import type { KeySet } from "./litellm-keys.js";
import { describe, isMapping, type Path } from "./messages.js";
import type { Report } from "./report.js";
import type { Deployment } from "./types.js";

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
    "similarity_threshold",
    "semantic_cache_embedding_model",
    "redis_semantic_cache_embedding_model",
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
    s3_bucket_name: "only type redis, local or postgres-semantic is implemented",
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
  type: z.enum(["redis", "local", "postgres-semantic"]).optional(),
  similarity_threshold: z.number().min(0).max(1).optional(),
  semantic_cache_embedding_model: z.string().min(1).optional(),
  redis_semantic_cache_embedding_model: z.string().min(1).optional(),
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
 * Reads `litellm_settings.cache` and `cache_params`. `deployments` are the model list's, to check
 * `semantic_cache_embedding_model` names a group whose deployments all have `model_info.mode: embedding`.
 * @returns the settings when `cache` is true (and `cache_params` is usable), else undefined; problems and warnings
 *   go to `report`.
 */
export function readCacheSettings(
  report: Report,
  cache: boolean | undefined,
  params: unknown,
  deployments: readonly Deployment[],
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
  const type = parsed.type ?? "redis";
  const semantic = readSemantic(report, at, type, parsed, deployments);
  if (semantic === null) return undefined;
  const callTypes = parsed.supported_call_types?.map(
    (name) => SYNC_NAMES[name] ?? (name as CacheableCallType),
  );
  return {
    type,
    ttlSeconds: parsed.ttl ?? DEFAULT_CACHE_TTL_SECONDS,
    namespace: parsed.namespace ?? "",
    supportedCallTypes: [...new Set(callTypes ?? CACHEABLE_CALL_TYPES)],
    mode: parsed.mode ?? "default_on",
    scope: parsed.scope ?? "tenant",
    maxEntryBytes: parsed.max_entry_bytes ?? DEFAULT_MAX_ENTRY_BYTES,
    maxEntries: parsed.max_entries ?? DEFAULT_MAX_ENTRIES,
    ...(semantic === undefined ? {} : { semantic }),
  };
}

/**
 * The semantic settings of `type: postgres-semantic`; undefined for another type (its semantic keys are a
 * problem), null after a problem.
 */
function readSemantic(
  report: Report,
  at: Path,
  type: string,
  parsed: z.output<typeof cacheParamsSchema>,
  deployments: readonly Deployment[],
): SemanticCacheSettings | undefined | null {
  const model = parsed.semantic_cache_embedding_model ?? parsed.redis_semantic_cache_embedding_model;
  if (type !== "postgres-semantic") {
    const key =
      parsed.similarity_threshold !== undefined
        ? "similarity_threshold"
        : model !== undefined
          ? "semantic_cache_embedding_model"
          : undefined;
    if (key === undefined) return undefined;
    report.problem([...at, key], "is read only with type: postgres-semantic");
    return null;
  }
  if (model === undefined) {
    report.problem(
      at,
      "type postgres-semantic needs semantic_cache_embedding_model: an alias of the model list whose deployments have model_info.mode: embedding",
    );
    return null;
  }
  const group = deployments.filter((d) => d.modelName === model);
  const modelAt: Path = [...at, "semantic_cache_embedding_model"];
  if (group.length === 0) {
    report.problem(modelAt, `"${model}" is not a model_name of the model list`);
    return null;
  }
  if (group.some((d) => d.mode !== "embedding")) {
    report.problem(
      modelAt,
      `"${model}" is not an embedding model: give each of its deployments model_info.mode: embedding`,
    );
    return null;
  }
  return {
    similarityThreshold: parsed.similarity_threshold ?? DEFAULT_SIMILARITY_THRESHOLD,
    embeddingModel: model,
  };
}
