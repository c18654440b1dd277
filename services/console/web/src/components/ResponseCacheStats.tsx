import type { UsageTotals } from "../api";
import { SavingCard } from "./UsageStats";

/**
 * The gateway's response cache over the period (docs/cache.md): requests answered from it (and their share of all
 * requests) and what those answers would have cost; shown only when the period has a hit.
 */
export function ResponseCacheStats({ totals }: { totals: UsageTotals }) {
  if (totals.cache_hits === 0) return null;
  return (
    <SavingCard
      testId="response-cache"
      served={{
        label: "Answered from the gateway's cache",
        part: totals.cache_hits,
        whole: totals.requests,
        wholeName: "requests",
      }}
      saved={{ label: "Saved by the response cache", usd: totals.cache_saved_spend }}
      note="A cached answer costs nothing: saved is what the same calls cost when they were first answered."
    />
  );
}
