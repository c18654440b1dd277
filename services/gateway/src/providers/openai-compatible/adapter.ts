/**
 * Adapter for servers that speak OpenAI's chat completions API (OpenAI API reference,
 * `POST {api_base}/chat/completions`, `Authorization: Bearer`): OpenAI itself, vLLM, Ollama's /v1,
 * llama.cpp server, Docker Model Runner, and Anthropic's OpenAI SDK compatibility endpoint
 * (`https://api.anthropic.com/v1/`, docs.anthropic.com "OpenAI SDK compatibility").
 */
import type { Deployment, ProviderName } from "../../config/types.js";
import type { ProviderAdapter, UpstreamRequest } from "../types.js";

interface Target {
  origin: string;
  path: string;
  headers: Record<string, string>;
}

/** Parsed api_base per deployment, so the hot path never parses a URL. */
const targets = new WeakMap<Deployment, Target>();

function targetFor(deployment: Deployment): Target {
  let target = targets.get(deployment);
  if (target === undefined) {
    const base = new URL(deployment.apiBase);
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (deployment.apiKey !== undefined) headers.authorization = `Bearer ${deployment.apiKey}`;
    target = { origin: base.origin, path: `${base.pathname.replace(/\/$/, "")}/chat/completions`, headers };
    targets.set(deployment, target);
  }
  return target;
}

/** Creates the adapter for one provider name; the wire format is the same for all of them. */
export function openAICompatible(provider: ProviderName): ProviderAdapter {
  return {
    provider,
    chatCompletions(deployment, json): UpstreamRequest {
      const target = targetFor(deployment);
      return {
        origin: target.origin,
        path: target.path,
        headers: target.headers,
        body: json,
      };
    },
  };
}

/**
 * LiteLLM provider prefixes whose servers speak OpenAI's API: the config loader suggests registering them as
 * `openai/<model>` with their `api_base` (LiteLLM docs, providers/openai_compatible.md).
 */
export const openAICompatiblePrefixes: ReadonlySet<string> = new Set([
  "ollama",
  "ollama_chat",
  "hosted_vllm",
  "vllm",
  "llamafile",
  "lm_studio",
  "openai_like",
  "text-completion-openai",
  "docker_model_runner",
]);
