/**
 * Cache lookup step (after authorize and the endpoint's precheck, before admission): for a cacheable call, its
 * key (`response-cache/key.ts`, from the body as the client sent it: the input guard has not run yet) and the
 * entry stored under it. Does nothing, and computes nothing, when the response cache is off, the endpoint is
 * not cached, or its call type is not in `supported_call_types`. The semantic lookup, which sends the prompt to
 * an embedding model, is a later step (`cache-semantic-lookup.ts`, after admission and the input guard).
 */
import { cachePolicy, readControls } from "../../response-cache/controls.js";
import type { ResponseCache } from "../../response-cache/index.js";
import { cacheKey, type KeyInput, scopeOf } from "../../response-cache/key.js";
import { semanticPrompt } from "../../response-cache/semantic/index.js";
import type { CachedAnswer } from "../../response-cache/types.js";
import type { Endpoint } from "../endpoint.js";
import type { CallContext, EndpointBody, PipelineDeps } from "../types.js";

/** The response header naming the call's cache entry (LiteLLM's), on every answer that was looked up or stored. */
export const CACHE_KEY_HEADER = "x-litellm-cache-key";
/** The response header of a semantic hit: the cosine similarity (0..1) of the stored prompt (LiteLLM's name). */
export const SEMANTIC_SIMILARITY_HEADER = "x-litellm-semantic-similarity";

/**
 * Sets `call.cache` for a cacheable call, removes the body's `cache` controls (they never go upstream), and
 * looks the entry up unless the controls say `no-cache` (or `default_off` mode without `use-cache`). An exact
 * miss that the semantic cache may answer sets `call.cache.semanticLookup` and is not counted as a miss yet.
 * @returns the entry to answer with (an exact hit), or undefined (a miss, or not looked up).
 * @throws GatewayError 400 for `cache` controls that are not valid.
 */
export async function lookupCache<B extends EndpointBody>(
  call: CallContext<B>,
  endpoint: Endpoint<B>,
  deps: PipelineDeps,
): Promise<CachedAnswer | undefined> {
  const cache = deps.responseCache;
  const spec = endpoint.cache;
  if (cache === undefined || spec === undefined || call.model === undefined) return undefined;
  const { settings } = cache;
  const controls = readControls(call.body.cache);
  if (call.body.cache !== undefined) {
    delete call.body.cache;
    call.json = undefined; // the client's own text still holds it: the body is serialised instead
  }
  if (!(settings.supportedCallTypes as readonly string[]).includes(call.callType)) return undefined;
  if (spec.eligible !== undefined && !spec.eligible(call.body)) return undefined;
  const policy = cachePolicy(settings, controls);
  if (!policy.lookup && !policy.store) return undefined;
  const scope = scopeOf(call.auth, settings.scope);
  const namespace = [settings.namespace, controls.namespace].filter((n) => n !== "").join(".");
  const keyInput: KeyInput = {
    callType: call.callType,
    modelGroup: call.model,
    groupVersion: cache.groupVersion(call.model),
    scope,
    namespace,
    body: call.body,
  };
  const key = cacheKey(keyInput);
  call.cache = {
    key,
    storageKey: `rc:${namespace}:${scope}:${key}`,
    store: policy.store,
    ttlSeconds: controls.ttlSeconds ?? settings.ttlSeconds,
    hit: false,
  };
  if (!policy.lookup) return undefined;
  const maxAgeMs =
    controls.maxAgeSeconds === undefined ? Number.POSITIVE_INFINITY : controls.maxAgeSeconds * 1000;
  const entry = await cache.store.get(call.cache.storageKey);
  if (usableEntry(call, cache, entry, maxAgeMs)) return entry;
  if (cache.semantic !== undefined && semanticPrompt(call.callType, call.body) !== undefined) {
    // Asked after admission and the input guard (`cache-semantic-lookup.ts`), which counts the miss.
    const { body: _client, ...keyParts } = keyInput;
    call.cache.semanticLookup = { keyParts, maxAgeMs };
    return undefined;
  }
  countMiss(call, cache);
  return undefined;
}

/**
 * Whether `entry` may answer `call`: of this entry format, of the call's endpoint, and no older than
 * `maxAgeMs` (the request's `s-maxage`).
 */
export function usableEntry(
  call: CallContext,
  cache: ResponseCache,
  entry: CachedAnswer | undefined,
  maxAgeMs: number,
): entry is CachedAnswer {
  return (
    entry !== undefined &&
    entry.v === 1 &&
    entry.callType === call.callType &&
    cache.clock.now() - entry.storedAt <= maxAgeMs
  );
}

/** Counts `call`, looked up and not found, in `litellm_cache_misses_metric`. */
export function countMiss(call: CallContext, cache: ResponseCache): void {
  cache.metrics.misses.inc({ model: call.model ?? "", call_type: call.callType });
}

/**
 * The `x-litellm-cache-key` header of a call that was looked up or stored, and on a semantic hit
 * `x-litellm-semantic-similarity` (4 decimals); empty otherwise.
 */
export function cacheKeyHeader(call: CallContext): Record<string, string> {
  if (call.cache === undefined) return {};
  const similarity = call.cache.hit ? call.cache.similarity : undefined;
  return {
    [CACHE_KEY_HEADER]: call.cache.key,
    ...(similarity === undefined ? {} : { [SEMANTIC_SIMILARITY_HEADER]: similarity.toFixed(4) }),
  };
}
