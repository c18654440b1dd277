/**
 * Adapter for servers that speak OpenAI's API (OpenAI API reference, `POST {api_base}/chat/completions`,
 * `/embeddings`, `/completions`, `/responses`, `Authorization: Bearer`): OpenAI itself, vLLM, Ollama's /v1,
 * llama.cpp server, Docker Model Runner. (Anthropic has its own adapter: providers/anthropic/.)
 */
import type { Deployment, ProviderName } from "../../config/types.js";
import type { ProviderAdapter, UpstreamApi, UpstreamRequest } from "../types.js";

interface Target {
  origin: string;
  /** The API base's path without a trailing slash, e.g. `/v1`. */
  basePath: string;
  headers: Record<string, string>;
  /** `{basePath}/{api}` per API, made on first use. */
  paths: Partial<Record<UpstreamApi, string>>;
}

/** Parsed api_base per deployment, so the hot path never parses a URL. */
const targets = new WeakMap<Deployment, Target>();

function targetFor(deployment: Deployment): Target {
  let target = targets.get(deployment);
  if (target === undefined) {
    const base = new URL(deployment.apiBase);
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (deployment.apiKey !== undefined) headers.authorization = `Bearer ${deployment.apiKey}`;
    target = { origin: base.origin, basePath: base.pathname.replace(/\/$/, ""), headers, paths: {} };
    targets.set(deployment, target);
  }
  return target;
}

/** `{api_base}/{api}` for a deployment, e.g. `https://api.openai.com` + `/v1/embeddings`. */
export function openAIRequest(api: UpstreamApi, deployment: Deployment, json: string): UpstreamRequest {
  const target = targetFor(deployment);
  let path = target.paths[api];
  if (path === undefined) {
    path = `${target.basePath}/${api}`;
    target.paths[api] = path;
  }
  return { origin: target.origin, path, headers: target.headers, body: json };
}

/**
 * Creates the adapter for one provider name; the wire format is the same for all of them.
 * @param native the APIs every deployment of this provider serves natively.
 */
export function openAICompatible(provider: ProviderName, native: readonly UpstreamApi[]): ProviderAdapter {
  const served = new Set<UpstreamApi>(native);
  return {
    provider,
    serves: (_deployment, api) => served.has(api),
    request: openAIRequest,
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
