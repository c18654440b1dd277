/**
 * Cache lookup step (after authorize and the endpoint's precheck, before admission): for a cacheable call, its
 * key (`response-cache/key.ts`, from the body as the client sent it: the input guard has not run yet) and the
 * entry stored under it. Does nothing, and computes nothing, when the response cache is off, the endpoint is
 * not cached, or its call type is not in `supported_call_types`.
 */
import { cachePolicy, readControls } from "../../response-cache/controls.js";
import { cacheKey, scopeOf } from "../../response-cache/key.js";
import type { CachedAnswer } from "../../response-cache/types.js";
import type { Endpoint } from "../endpoint.js";
import type { CallContext, EndpointBody, PipelineDeps } from "../types.js";

/** The response header naming the call's cache entry (LiteLLM's), on every answer that was looked up or stored. */
export const CACHE_KEY_HEADER = "x-litellm-cache-key";

/**
 * Sets `call.cache` for a cacheable call, removes the body's `cache` controls (they never go upstream), and
 * looks the entry up unless the controls say `no-cache` (or `default_off` mode without `use-cache`).
 * @returns the entry to answer with (a hit), or undefined (a miss, or not looked up).
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
  const key = cacheKey({
    callType: call.callType,
    modelGroup: call.model,
    groupVersion: cache.groupVersion(call.model),
    scope,
    namespace,
    body: call.body,
  });
  call.cache = {
    key,
    storageKey: `rc:${namespace}:${scope}:${key}`,
    store: policy.store,
    ttlSeconds: controls.ttlSeconds ?? settings.ttlSeconds,
    hit: false,
  };
  if (!policy.lookup) return undefined;
  const entry = await cache.store.get(call.cache.storageKey);
  const labels = { model: call.model, call_type: call.callType };
  const maxAgeMs =
    controls.maxAgeSeconds === undefined ? Number.POSITIVE_INFINITY : controls.maxAgeSeconds * 1000;
  if (entry === undefined || entry.v !== 1 || entry.callType !== call.callType) {
    cache.metrics.misses.inc(labels);
    return undefined;
  }
  if (cache.clock.now() - entry.storedAt > maxAgeMs) {
    cache.metrics.misses.inc(labels);
    return undefined;
  }
  return entry;
}

/** The `x-litellm-cache-key` header of a call that was looked up or stored; empty otherwise. */
export function cacheKeyHeader(call: CallContext): Record<string, string> {
  return call.cache === undefined ? {} : { [CACHE_KEY_HEADER]: call.cache.key };
}
