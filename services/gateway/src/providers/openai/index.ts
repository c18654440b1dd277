/**
 * OpenAI (`openai/<model>` in `litellm_params.model`): the public API at https://api.openai.com/v1 with
 * OPENAI_API_KEY, or any OpenAI-compatible server given as `api_base` (vLLM, Ollama's /v1, llama.cpp).
 *
 * Prices: OpenAI's pricing page (platform.openai.com/docs/pricing) as republished in March 2026, checked on
 * 2026-11-23; standard tier, USD per million tokens, no batch discount. The "Cached input" column (what
 * `prompt_tokens_details.cached_tokens` / `input_tokens_details.cached_tokens` are billed at) from the same page,
 * checked on 2026-11-27; models without one there (gpt-5-pro, o3-pro, gpt-4-turbo, gpt-3.5-turbo) bill cached
 * tokens as input. Embedding models
 * (input only) and the legacy completions models (`gpt-3.5-turbo-instruct`, `davinci-002`, `babbage-002`) from
 * the same page's "Embeddings" and "Other models" tables, checked on 2026-11-25.
 */
import type { Deployment } from "../../config/types.js";
import { openAICompatible } from "../openai-compatible/adapter.js";
import { type ProviderAdapter, type ProviderFacts, perMillion, type UpstreamApi } from "../types.js";

const DEFAULT_API_BASE = "https://api.openai.com/v1";
const compatible = openAICompatible("openai", ["chat/completions", "embeddings", "completions"]);

/**
 * OpenAI's own API serves the Responses API; an OpenAI-compatible server (custom `api_base`) does only when its
 * `model_info.supported_endpoints` lists `/v1/responses` (vLLM and Ollama serve a subset of it, llama.cpp none).
 */
const adapter: ProviderAdapter = {
  ...compatible,
  serves: (deployment: Deployment, api: UpstreamApi) =>
    compatible.serves(deployment, api) ||
    (api === "responses" &&
      (deployment.supportedEndpoints?.includes("/v1/responses") ?? deployment.apiBase === DEFAULT_API_BASE)),
};

export const openai: ProviderFacts = {
  name: "openai",
  defaultApiBase: DEFAULT_API_BASE,
  keyEnv: "OPENAI_API_KEY",
  adapter,
  prices: {
    "gpt-5.4": perMillion(2.5, 15, { cacheRead: 0.25 }),
    "gpt-5.1": perMillion(1.25, 10, { cacheRead: 0.125 }),
    "gpt-5-pro": perMillion(15, 120),
    "gpt-5-mini": perMillion(0.25, 2, { cacheRead: 0.025 }),
    "gpt-5-nano": perMillion(0.05, 0.4, { cacheRead: 0.005 }),
    "gpt-5": perMillion(1.25, 10, { cacheRead: 0.125 }),
    "gpt-4.1-nano": perMillion(0.1, 0.4, { cacheRead: 0.025 }),
    "gpt-4.1-mini": perMillion(0.4, 1.6, { cacheRead: 0.1 }),
    "gpt-4.1": perMillion(2, 8, { cacheRead: 0.5 }),
    "gpt-4o-mini": perMillion(0.15, 0.6, { cacheRead: 0.075 }),
    "gpt-4o": perMillion(2.5, 10, { cacheRead: 1.25 }),
    "gpt-4-turbo": perMillion(10, 30),
    "gpt-3.5-turbo": perMillion(0.5, 1.5),
    "o4-mini": perMillion(1.1, 4.4, { cacheRead: 0.275 }),
    "o3-mini": perMillion(1.1, 4.4, { cacheRead: 0.55 }),
    "o3-pro": perMillion(20, 80),
    o3: perMillion(2, 8, { cacheRead: 0.5 }),
    "o1-mini": perMillion(1.1, 4.4, { cacheRead: 0.55 }),
    o1: perMillion(15, 60, { cacheRead: 7.5 }),
    "gpt-3.5-turbo-instruct": perMillion(1.5, 2),
    "davinci-002": perMillion(2, 2),
    "babbage-002": perMillion(0.4, 0.4),
    "text-embedding-3-small": perMillion(0.02, 0),
    "text-embedding-3-large": perMillion(0.13, 0),
    "text-embedding-ada-002": perMillion(0.1, 0),
  },
};
