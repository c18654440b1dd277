/**
 * Anthropic (`anthropic/<model>`), called through its native Messages API: base URL
 * https://api.anthropic.com/v1, `POST {base}/messages` with `x-api-key` and `anthropic-version`; key
 * ANTHROPIC_API_KEY. Chat completions are translated to Messages and back (adapter.ts; request.ts,
 * response.ts, stream.ts); Anthropic's OpenAI SDK compatibility layer is meant for testing and comparing
 * models, not production, and drops prompt caching and thinking details, so it is not used.
 *
 * Prices: Anthropic's pricing page (docs.anthropic.com/en/docs/about-claude/pricing, "Model pricing" and
 * "Long context pricing") and its March 2026 republication, checked on 2026-11-23 (base input and output) and
 * 2026-11-27 (prompt caching); USD per million tokens, no batch discount. Prompt caching is priced from the base
 * input price by the page's multipliers: 5-minute cache writes 1.25×, 1-hour cache writes 2×, cache reads
 * (hits and refreshes) 0.1× ({@link claude}). Sonnet 4 and 4.5 bill every token of a request whose input
 * exceeds 200K tokens at the long-context rates ($6 input, $22.50 output). Opus 4.5 and later cost less than
 * Opus 4/4.1, hence their own entries.
 */
import { type Price, type ProviderFacts, perMillion } from "../types.js";

/**
 * A Claude model's price from its base input and output prices (USD per million tokens), the cache prices at
 * the pricing page's multipliers, and the long-context input and output prices when it has them.
 */
function claude(input: number, output: number, longContext?: { input: number; output: number }): Price {
  const cache = (base: number) => ({
    cacheWrite: base * 1.25,
    cacheWrite1h: base * 2,
    cacheRead: base * 0.1,
  });
  return perMillion(input, output, {
    ...cache(input),
    ...(longContext === undefined
      ? {}
      : {
          // Cache reads and writes keep their ratio to input in the tier (`cost/bill.ts` tierOf scales them).
          inputAbove200k: longContext.input,
          outputAbove200k: longContext.output,
        }),
  });
}

import { anthropicAdapter } from "./adapter.js";

export const anthropic: ProviderFacts = {
  name: "anthropic",
  defaultApiBase: "https://api.anthropic.com/v1",
  keyEnv: "ANTHROPIC_API_KEY",
  adapter: anthropicAdapter,
  prices: {
    "claude-opus-4-6": claude(5, 25),
    "claude-opus-4-5": claude(5, 25),
    "claude-opus-4": claude(15, 75),
    "claude-sonnet-4": claude(3, 15, { input: 6, output: 22.5 }),
    "claude-haiku-4": claude(1, 5),
    "claude-3-7-sonnet": claude(3, 15),
    "claude-3-5-sonnet": claude(3, 15),
    "claude-3-5-haiku": claude(0.8, 4),
    "claude-3-opus": claude(15, 75),
    "claude-3-haiku": claude(0.25, 1.25),
  },
};
