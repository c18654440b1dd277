/**
 * Anthropic (`anthropic/<model>`), called through its OpenAI SDK compatibility layer: base URL
 * https://api.anthropic.com/v1/, Bearer auth, POST {base}/chat/completions
 * (platform.claude.com/docs/en/cli-sdks-libraries/libraries/openai-sdk); key ANTHROPIC_API_KEY. Its native
 * Messages API (`POST {base}/messages`, `x-api-key`) serves the gateway's `/v1/messages` as it is
 * (`messages-api.ts`).
 *
 * Prices: Anthropic's pricing page (docs.anthropic.com/en/docs/about-claude/pricing) and its March 2026
 * republication, checked on 2026-11-23; base input and output, USD per million tokens, no caching or batch
 * discount. Opus 4.5 and later cost less than Opus 4/4.1, hence their own entries.
 */
import { openAICompatible } from "../openai-compatible/adapter.js";
import { type ProviderAdapter, type ProviderFacts, perMillion } from "../types.js";
import { messagesRequest } from "./messages-api.js";

const compatible = openAICompatible("anthropic", ["chat/completions"]);

/** Chat completions through the OpenAI compatibility layer; Messages natively. */
const adapter: ProviderAdapter = {
  provider: "anthropic",
  serves: (deployment, api) => api === "messages" || compatible.serves(deployment, api),
  request: (api, deployment, json) =>
    api === "messages" ? messagesRequest(deployment, json) : compatible.request(api, deployment, json),
};

export const anthropic: ProviderFacts = {
  name: "anthropic",
  defaultApiBase: "https://api.anthropic.com/v1",
  keyEnv: "ANTHROPIC_API_KEY",
  adapter,
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
