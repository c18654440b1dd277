/**
 * What the response cache stores and the seam its exact stores implement: a store answers for one key. The
 * semantic store (`semantic/`, entries found by the similarity of their prompt's embedding) keeps the same
 * {@link CachedAnswer}s and is asked by the lookup step after an exact miss.
 */
import type { Usage } from "../usage/types.js";
import type { KeyInput } from "./key.js";

/** One stored answer. */
export interface CachedAnswer {
  /** Format version of the entry; an entry of another version is a miss. */
  v: 1;
  /** LiteLLM's `call_type` of the endpoint that answered. */
  callType: string;
  /**
   * The answer as the client got it (after the output guard), in its endpoint's JSON shape: a `chat.completion`,
   * a `text_completion`, an embeddings `list`, a Responses `response`, an Anthropic `message`. An answer that was
   * streamed is stored assembled into that shape.
   */
  answer: Record<string, unknown>;
  /** The tokens the answer took (chat completions' names). */
  usage: Usage;
  /** What the call cost when it was answered, USD: what a hit saves. */
  cost: number;
  /** `provider/upstream-model` and id of the deployment that answered, for the hit's spend row. */
  model: string;
  deploymentId: string;
  /** Epoch ms when stored (`s-maxage` reads it). */
  storedAt: number;
}

/** A store of entries by key. Implementations never throw: a store that fails answers a miss / drops the write. */
export interface CacheStore {
  /** `redis` or `local`, for logs and docs. */
  readonly kind: "redis" | "local";
  /** The entry stored under `key`, or undefined (absent, expired, unreadable, or the store is unavailable). */
  get(key: string): Promise<CachedAnswer | undefined>;
  /** Stores `entry` under `key` for `ttlSeconds`; `json` is its serialised form (its size was checked). */
  set(key: string, json: string, ttlSeconds: number): Promise<void>;
}

/** One call's cache state (`CallContext.cache`), set by the lookup step when the call is cacheable. */
export interface CallCacheState {
  /** The entry's key, 64 hex digits (the `x-litellm-cache-key` header). */
  key: string;
  /** Where the store keeps it: `rc:<namespace>:<scope>:<key>`. */
  storageKey: string;
  /** The answer may be stored (not `no-store`, not `default_off` without `use-cache`). */
  store: boolean;
  /** Seconds a stored answer lives (the request's `ttl`, else the config's). */
  ttlSeconds: number;
  /** The call was answered from the cache. */
  hit: boolean;
  /** On a hit: USD the answer cost when it was first answered. */
  savedCost?: number;
  /**
   * Set by the exact lookup when it missed and the semantic cache is to be asked: the key's parts but the body
   * (the semantic lookup takes the body as guarded) and the entry age `s-maxage` allows (ms; Infinity without).
   */
  semanticLookup?: PendingSemanticLookup;
  /** The call was looked up semantically: its filter key, scope and prompt embedding (stored with a miss's answer). */
  semantic?: { filterKey: string; scope: string; vector: number[] };
  /** On a semantic hit: the cosine similarity (0..1) of the stored prompt (`x-litellm-semantic-similarity`). */
  similarity?: number;
}

/** A semantic lookup the exact lookup left for after admission and the input guard (`CallCacheState`). */
export interface PendingSemanticLookup {
  /** The exact key's parts but the body. */
  keyParts: Omit<KeyInput, "body">;
  /** The oldest entry (age in ms) the request's `s-maxage` accepts; Infinity without it. */
  maxAgeMs: number;
}
