/**
 * Anthropic (`anthropic/<model>`), called through its OpenAI SDK compatibility layer: base URL
 * https://api.anthropic.com/v1/, Bearer auth, POST {base}/chat/completions
 * (platform.claude.com/docs/en/cli-sdks-libraries/libraries/openai-sdk); key ANTHROPIC_API_KEY.
 *
 * Prices: Anthropic's pricing page (docs.anthropic.com/en/docs/about-claude/pricing) and its March 2026
 * republication, checked on 2026-11-23; base input and output, USD per million tokens, no caching or batch
 * discount. Opus 4.5 and later cost less than Opus 4/4.1, hence their own entries.
 */
import { openAICompatible } from "../openai-compatible/adapter.js";
import { type ProviderFacts, perMillion } from "../types.js";

export const anthropic: ProviderFacts = {
  name: "anthropic",
  defaultApiBase: "https://api.anthropic.com/v1",
  keyEnv: "ANTHROPIC_API_KEY",
  adapter: openAICompatible("anthropic", ["chat/completions"]),
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
