import type { CachingSavings } from "../api";
import { count } from "../format";
import { SavingCard } from "./UsageStats";

/**
 * Prompt caching over the period: the input tokens read from the provider's prompt cache (and their share of
 * all input tokens) and what that saved, with what the figure means written out under it (no hovering).
 */
export function CachingStats({ caching, promptTokens }: { caching: CachingSavings; promptTokens: number }) {
  return (
    <SavingCard
      testId="caching"
      served={{
        label: "Cached input tokens",
        part: caching.cached_tokens,
        whole: promptTokens,
        wholeName: "input tokens",
      }}
      saved={{ label: "Saved by prompt caching", usd: caching.saved }}
      note={
        <>
          Saved: what the cached input tokens would have cost as fresh input, minus what they cost at the
          provider's cached-input price (the gateway's prices). Writing to the cache can cost more than fresh
          input; that is in your spend, not taken off here.
          {caching.unpriced_tokens > 0 &&
            ` ${count(caching.unpriced_tokens)} cached tokens of a model no longer served are not priced.`}
        </>
      }
    />
  );
}
