/**
 * The response cache's settings, as the config loader reads them from LiteLLM's `litellm_settings.cache` and
 * `litellm_settings.cache_params` (LiteLLM docs, proxy/caching.md): which store, how long entries live, which
 * endpoints are cached, whether caching is on by default, and how entries are scoped.
 */

/** LiteLLM's `call_type` of the endpoints the cache serves (a subset of the pipeline's `CallType`). */
export type CacheableCallType =
  | "acompletion"
  | "atext_completion"
  | "aembedding"
  | "aresponses"
  | "anthropic_messages";

/**
 * Where entries live: `redis` (the platform's Redis, `REDIS_URL`; shared by every instance) or `local` (an
 * in-process LRU, per instance) or `postgres-semantic` (exact entries in Redis/the LRU as for `redis`, and
 * near-duplicate prompts found by embedding similarity in Postgres with pgvector: docs/cache.md "Semantic
 * cache"). LiteLLM's `cache_params.type`; `redis` without `REDIS_URL` runs as `local`.
 */
export type ResponseCacheType = "redis" | "local" | "postgres-semantic";

/** The semantic cache's settings (`cache_params.type: postgres-semantic`). */
export interface SemanticCacheSettings {
  /** Least cosine similarity (0..1) of a stored prompt's embedding for a hit (`similarity_threshold`; default 0.95). */
  similarityThreshold: number;
  /**
   * The model group whose deployments embed prompts (`semantic_cache_embedding_model`; LiteLLM calls it
   * `redis_semantic_cache_embedding_model`): an alias of the model list with `model_info.mode: embedding`.
   */
  embeddingModel: string;
}

/** `default_on`: every request is looked up and stored; `default_off`: only requests with `cache: {use-cache: true}`. */
export type ResponseCacheMode = "default_on" | "default_off";

/**
 * Whose entries a request may hit: `tenant` (default; the key's team, else the key itself) or `global` (every
 * caller shares entries: `cache_params.scope: global`, the gateway's own key, an explicit opt-in).
 */
export type ResponseCacheScope = "tenant" | "global";

/** The loaded response cache settings (`ModelConfig.responseCache`; absent when `cache` is not true). */
export interface ResponseCacheSettings {
  type: ResponseCacheType;
  /** Seconds an entry lives (`cache_params.ttl`; default {@link DEFAULT_CACHE_TTL_SECONDS}). */
  ttlSeconds: number;
  /** Prefix of every entry's key (`cache_params.namespace`); entries of another namespace are never hit. */
  namespace: string;
  /** The call types looked up and stored (`cache_params.supported_call_types`; default every cacheable one). */
  supportedCallTypes: readonly CacheableCallType[];
  mode: ResponseCacheMode;
  scope: ResponseCacheScope;
  /** The largest answer stored, bytes of its JSON (`cache_params.max_entry_bytes`, the gateway's own key). */
  maxEntryBytes: number;
  /** Entries the in-process LRU keeps at most (`cache_params.max_entries`, the gateway's own key; `local` only). */
  maxEntries: number;
  /** Present when `type` is `postgres-semantic`. */
  semantic?: SemanticCacheSettings;
}

/** Default `similarity_threshold` of the semantic cache (LiteLLM's docs use 0.8 in examples; the issue asks 0.95). */
export const DEFAULT_SIMILARITY_THRESHOLD = 0.95;

/** Default entry lifetime: 10 minutes (LiteLLM's default `ttl` for Redis caching). */
export const DEFAULT_CACHE_TTL_SECONDS = 600;
/** Default largest stored answer: 1 MiB of JSON. */
export const DEFAULT_MAX_ENTRY_BYTES = 1024 * 1024;
/** Default size of the in-process LRU: 10,000 entries. */
export const DEFAULT_MAX_ENTRIES = 10_000;

/**
 * The call types the cache serves, under LiteLLM's `supported_call_types` names (its `CallTypes` enum; LiteLLM
 * also accepts the sync names, `completion`, `embedding`, `text_completion`, `responses`, mapped to these).
 */
export const CACHEABLE_CALL_TYPES: readonly CacheableCallType[] = [
  "acompletion",
  "atext_completion",
  "aembedding",
  "aresponses",
  "anthropic_messages",
];
