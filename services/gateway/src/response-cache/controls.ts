/**
 * A request's own cache controls: the body's `cache` object, as LiteLLM reads it (LiteLLM docs,
 * proxy/caching.md, "Dynamic Cache Controls"): `no-cache` (do not answer from the cache), `no-store` (do not
 * store this answer), `ttl` (seconds this answer lives), `s-maxage` (accept only entries at most this many
 * seconds old), `namespace` (entries of this namespace only) and `use-cache` (look up and store in `default_off`
 * mode). The `cache` member never goes upstream.
 */

import type { ResponseCacheSettings } from "../config/cache-settings.js";
import { invalidRequest } from "../errors/gateway-error.js";

/** The controls of one request, validated. */
export interface CacheControls {
  noCache: boolean;
  noStore: boolean;
  /** Seconds the stored answer lives; undefined: the config's `ttl`. */
  ttlSeconds?: number;
  /** Oldest entry accepted, seconds; undefined: any entry still alive. */
  maxAgeSeconds?: number;
  /** The request's namespace, or "". */
  namespace: string;
  useCache: boolean;
}

const NONE: CacheControls = { noCache: false, noStore: false, namespace: "", useCache: false };
const KNOWN = new Set(["no-cache", "no-store", "ttl", "s-maxage", "namespace", "use-cache"]);

const seconds = (value: unknown, name: string): number | undefined => {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0)
    throw invalidRequest(`cache.${name} must be a positive number of seconds.`, `cache.${name}`);
  return value;
};

const flag = (value: unknown, name: string): boolean => {
  if (value === undefined) return false;
  if (typeof value !== "boolean")
    throw invalidRequest(`cache.${name} must be true or false.`, `cache.${name}`);
  return value;
};

/**
 * Reads a body's `cache` member.
 * @throws GatewayError 400 `invalid_request_error` naming the member that is not an object, an unknown control,
 *   or a control of the wrong type.
 */
export function readControls(value: unknown): CacheControls {
  if (value === undefined || value === null) return NONE;
  if (typeof value !== "object" || Array.isArray(value))
    throw invalidRequest("cache must be an object of cache controls (no-cache, no-store, ttl, …).", "cache");
  const raw = value as Record<string, unknown>;
  for (const name of Object.keys(raw))
    if (!KNOWN.has(name))
      throw invalidRequest(
        `cache.${name} is not a cache control; use no-cache, no-store, ttl, s-maxage, namespace or use-cache.`,
        `cache.${name}`,
      );
  const namespace = raw.namespace;
  if (namespace !== undefined && (typeof namespace !== "string" || !/^[\w.:-]{1,64}$/.test(namespace)))
    throw invalidRequest("cache.namespace must be 1 to 64 letters, digits, _, ., : or -.", "cache.namespace");
  const ttlSeconds = seconds(raw.ttl, "ttl");
  const maxAgeSeconds = seconds(raw["s-maxage"], "s-maxage");
  return {
    noCache: flag(raw["no-cache"], "no-cache"),
    noStore: flag(raw["no-store"], "no-store"),
    ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
    ...(maxAgeSeconds === undefined ? {} : { maxAgeSeconds }),
    namespace: typeof namespace === "string" ? namespace : "",
    useCache: flag(raw["use-cache"], "use-cache"),
  };
}

/** Whether a request with `controls` is looked up, and whether its answer may be stored, under `settings`. */
export function cachePolicy(
  settings: ResponseCacheSettings,
  controls: CacheControls,
): { lookup: boolean; store: boolean } {
  const on = settings.mode === "default_on" || controls.useCache;
  return { lookup: on && !controls.noCache, store: on && !controls.noStore };
}
