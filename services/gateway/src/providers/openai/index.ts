/**
 * OpenAI (`openai/<model>` in `litellm_params.model`): the public API at https://api.openai.com/v1 with
 * OPENAI_API_KEY, or any OpenAI-compatible server given as `api_base` (vLLM, Ollama's /v1, llama.cpp).
 *
 * List prices: the price catalogue (`cost/list-prices.ts`).
 */
import type { Deployment } from "../../config/types.js";
import { openAICompatible } from "../openai-compatible/adapter.js";
import type { ProviderAdapter, ProviderFacts, UpstreamApi } from "../types.js";

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
};
