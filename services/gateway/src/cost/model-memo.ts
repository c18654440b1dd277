/**
 * Memoizes a lookup of catalogue data by (provider, upstream model), misses included: the catalogues are
 * immutable for the process's life (list-prices.ts, output-limits.ts).
 */
import type { ProviderName } from "../config/types.js";

/** `lookUp` with its answers, undefined ones too, kept per (provider, model). No throws of its own. */
export function memoByModel<T>(
  lookUp: (provider: ProviderName, model: string) => T | undefined,
): (provider: ProviderName, model: string) => T | undefined {
  const cache = new Map<string, T | null>();
  return (provider, model) => {
    const key = `${provider}\u0000${model}`;
    let found = cache.get(key);
    if (found === undefined) {
      found = lookUp(provider, model) ?? null;
      cache.set(key, found);
    }
    return found ?? undefined;
  };
}
