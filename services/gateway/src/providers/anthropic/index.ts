/**
 * Anthropic (`anthropic/<model>`), called through its native Messages API: base URL
 * https://api.anthropic.com/v1, `POST {base}/messages` with `x-api-key` and `anthropic-version`; key
 * ANTHROPIC_API_KEY. Chat completions are translated to Messages and back (adapter.ts; request.ts,
 * response.ts, stream.ts); Anthropic's OpenAI SDK compatibility layer is meant for testing and comparing
 * models, not production, and drops prompt caching and thinking details, so it is not used.
 *
 * Prices: Anthropic's pricing page (docs.anthropic.com/en/docs/about-claude/pricing) and its March 2026
 * republication, checked on 2026-11-23; base input and output, USD per million tokens, no caching or batch
 * discount. Opus 4.5 and later cost less than Opus 4/4.1, hence their own entries.
 */
import { type ProviderFacts, perMillion } from "../types.js";
import { anthropicAdapter } from "./adapter.js";

export const anthropic: ProviderFacts = {
  name: "anthropic",
  defaultApiBase: "https://api.anthropic.com/v1",
  keyEnv: "ANTHROPIC_API_KEY",
  adapter: anthropicAdapter,
  prices: {
    "claude-opus-4-6": perMillion(5, 25),
    "claude-opus-4-5": perMillion(5, 25),
    "claude-opus-4": perMillion(15, 75),
    "claude-sonnet-4": perMillion(3, 15),
    "claude-haiku-4": perMillion(1, 5),
    "claude-3-7-sonnet": perMillion(3, 15),
    "claude-3-5-sonnet": perMillion(3, 15),
    "claude-3-5-haiku": perMillion(0.8, 4),
    "claude-3-opus": perMillion(15, 75),
    "claude-3-haiku": perMillion(0.25, 1.25),
  },
};
