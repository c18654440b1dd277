/**
 * The providers the gateway can call, by `litellm_params.model` prefix. Each provider's facts (default base
 * URL, key variable, adapter) live in its own folder; this is the registry.
 */
import type { ProviderName } from "../config/types.js";
import { anthropic } from "./anthropic/index.js";
import { openai } from "./openai/index.js";
import type { ProviderAdapter, ProviderFacts } from "./types.js";

/** Every supported provider, by name. */
export const providers: Readonly<Record<ProviderName, ProviderFacts>> = { openai, anthropic };

/** Whether `prefix` names a supported provider. */
export function isProviderName(prefix: string): prefix is ProviderName {
  return Object.hasOwn(providers, prefix);
}

/** The adapter for a deployment's provider. */
export function adapterFor(provider: ProviderName): ProviderAdapter {
  return providers[provider].adapter;
}

export { openAICompatiblePrefixes } from "./openai-compatible/adapter.js";
export type {
  ProviderAdapter,
  ProviderFacts,
  UpstreamAnswer,
  UpstreamApi,
  UpstreamRequest,
} from "./types.js";
