/**
 * Anthropic (`anthropic/<model>`), called through its native Messages API: base URL
 * https://api.anthropic.com/v1, `POST {base}/messages` with `x-api-key` and `anthropic-version`; key
 * ANTHROPIC_API_KEY. Chat completions are translated to Messages and back (adapter.ts; request.ts,
 * response.ts, stream.ts); Anthropic's OpenAI SDK compatibility layer is meant for testing and comparing
 * models, not production, and drops prompt caching and thinking details, so it is not used.
 *
 * List prices: the price catalogue (`cost/list-prices.ts`).
 */
import type { ProviderFacts } from "../types.js";
import { anthropicAdapter } from "./adapter.js";

export const anthropic: ProviderFacts = {
  name: "anthropic",
  defaultApiBase: "https://api.anthropic.com/v1",
  keyEnv: "ANTHROPIC_API_KEY",
  adapter: anthropicAdapter,
};
