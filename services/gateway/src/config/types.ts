/**
 * The gateway's model registry and routing settings, as read from `litellm/config.yaml` (LiteLLM's proxy
 * config format: docs/my-website/docs/proxy/configs.md in BerriAI/litellm) and resolved against the
 * environment. Produced by `loadModelConfig` (config/load-model-config.ts).
 */

import type { ResponseCacheSettings } from "./cache-settings.js";
import type { McpServerConfig } from "./mcp-servers.js";
import type { PricePart } from "./price-keys.js";

/** Upstream API families the gateway can call. Both speak OpenAI's chat completions wire format. */
export type ProviderName = "openai" | "anthropic";

/**
 * One of `litellm_params.cache_control_injection_points` (LiteLLM's `CacheControlMessageInjectionPoint`), validated
 * by the config loader (`config/schemas.ts`); applied by providers/anthropic/cache-injection.ts.
 */
export interface CacheControlInjectionPoint {
  location: "message";
  role?: "system" | "user" | "assistant";
  /** A message's position; negative counts from the end. Wins over `role`. */
  index?: number;
  control?: { type: "ephemeral"; ttl?: "5m" | "1h" };
}

/** One deployment: one `model_list[]` entry. Several deployments may share a `modelName` (a load-balanced group). */
export interface Deployment {
  /** `model_info.id`, or a stable id derived from the entry's position when absent. */
  id: string;
  /** `model_name`: the alias clients send as `model` (e.g. `general`). */
  modelName: string;
  /** Provider prefix of `litellm_params.model` (`openai/…`, `anthropic/…`). */
  provider: ProviderName;
  /** The upstream model name: `litellm_params.model` without its provider prefix. */
  upstreamModel: string;
  /** Base URL ending before `/chat/completions`, e.g. `https://api.openai.com/v1`; no trailing slash. */
  apiBase: string;
  /** Resolved API key (after `os.environ/VAR`), or undefined for keyless servers (Ollama, vLLM). */
  apiKey?: string;
  /** Name of the env var the key came from, for messages (never the value). */
  apiKeyEnv?: string;
  /**
   * Deployment limits, requests and tokens per minute (`litellm_params.rpm`/`tpm`), counted in process per
   * clock minute; a deployment at its limit is skipped when picking (router/deployment-state.ts).
   */
  rpm?: number;
  tpm?: number;
  /**
   * `model_info.base_model` without a provider prefix: the model whose list price applies when the upstream
   * name is not a public model name (LiteLLM's use of it for cost tracking, docs proxy/cost_tracking.md).
   */
  baseModel?: string;
  /** USD per token (`litellm_params.input_cost_per_token`/`output_cost_per_token`). */
  inputCostPerToken?: number;
  outputCostPerToken?: number;
  /**
   * USD per token of the parts priced apart (cache reads and writes, audio, reasoning, the >200k-token tier), from
   * LiteLLM's keys in litellm_params or model_info (`cache_read_input_token_cost`, …: config/price-keys.ts).
   */
  priceParts?: Readonly<Partial<Record<PricePart, number>>>;
  /** Upstream timeout in ms (`litellm_params.timeout` seconds × 1000), overriding the router's. */
  timeoutMs?: number;
  /**
   * Timeout of streaming requests in ms (`litellm_params.stream_timeout` seconds × 1000): the longest wait for
   * the response headers, for the first chunk and between chunks; else the router's, then 60 s (or `timeoutMs` when shorter).
   */
  streamTimeoutMs?: number;
  /** Relative pick weight within its group for simple-shuffle (`litellm_params.weight`); absent means 1. */
  weight?: number;
  /**
   * Routing tags: `litellm_params.tags` (where LiteLLM's tag-based routing reads them) and `model_info.tags`,
   * merged (e.g. `npu`, `default`). Used when `router_settings.enable_tag_filtering` is true.
   */
  tags: string[];
  /**
   * `model_info.supported_endpoints`: the OpenAI API paths the deployment's server serves natively (LiteLLM's
   * name, e.g. `["/v1/chat/completions", "/v1/responses"]`); absent: what its provider serves by default. An
   * `openai/` deployment with a custom `api_base` serves the Responses API natively only when this lists
   * `/v1/responses` (else the gateway translates to chat completions).
   */
  supportedEndpoints?: string[];
  /** `model_info.mode` (LiteLLM's: `chat`, `embedding`, …); the semantic cache's embedding model needs `embedding`. */
  mode?: string;
  /**
   * `model_info.max_output_tokens`: the most output tokens one answer (one choice) of this deployment can have
   * (LiteLLM's model info key). What a call without its own cap reserves (`cost/reservation.ts`); absent: the
   * model's output limit in models.dev's catalogue (`cost/output-limits.ts`), else the gateway's documented
   * default, {@link DEFAULT_MAX_OUTPUT_TOKENS} in `cost/reservation.ts`.
   */
  maxOutputTokens?: number;
  /**
   * `model_info.ignores_output_cap: true` (the gateway's own key, not LiteLLM's): the deployment is known to
   * answer past the output cap it is sent (a buggy proxy, a self-hosted server), so its JSON calls go upstream as
   * streams the gateway cuts at the reservation and assembles into the JSON answer (`router/cap-ignorers.ts`).
   */
  ignoresOutputCap?: true;
  /**
   * `litellm_params.cache_control_injection_points`: where the gateway adds Anthropic's `cache_control` on calls to
   * this deployment (`anthropic/` deployments only; providers/anthropic/cache-injection.ts).
   */
  cacheControlInjectionPoints?: readonly CacheControlInjectionPoint[];
  /** Unix seconds when the config was loaded; reported as `created` in /v1/models. */
  created: number;
}

/**
 * How a deployment is picked within a model group (`router_settings.routing_strategy`, LiteLLM's names):
 * `simple-shuffle` (random, weighted by `weight`, else `rpm`, else `tpm`), `least-busy` (fewest requests in
 * flight), `usage-based-routing` (fewest tokens this minute). docs.litellm.ai/docs/routing.
 */
export type RoutingStrategy = "simple-shuffle" | "least-busy" | "usage-based-routing";

/** Routing settings merged from `router_settings` and `litellm_settings`. */
export interface RouterSettings {
  /** Retries per deployment group after the first try (`num_retries`; default 2). */
  numRetries: number;
  /** Upstream request timeout in ms (`request_timeout`/`timeout` seconds × 1000; default 600 s). */
  timeoutMs: number;
  /** Timeout for streaming requests in ms (`router_settings.stream_timeout` seconds × 1000); absent: 60 s, or `timeoutMs` when shorter. */
  streamTimeoutMs?: number;
  /** Model group → fallback groups tried in order when the group fails (`litellm_settings.fallbacks`). */
  fallbacks: Record<string, string[]>;
  /** Failures before a deployment is cooled down (`allowed_fails`; default 3). */
  allowedFails: number;
  /** How long a failing deployment is skipped, in ms (`cooldown_time` seconds × 1000; default 5 s). */
  cooldownMs: number;
  /** `routing_strategy` (default `simple-shuffle`). */
  routingStrategy: RoutingStrategy;
  /** `enable_tag_filtering`: a request's tags choose among a group's deployments (default false). */
  tagFiltering: boolean;
  /** `tag_filtering_match_any`: a deployment matches when it has any (true, default) or all request tags. */
  tagMatchAny: boolean;
}

/** The loaded, validated, environment-resolved config. */
export interface ModelConfig {
  /** Absolute path of the file it came from (for messages). */
  sourcePath: string;
  deployments: Deployment[];
  router: RouterSettings;
  /**
   * The top-level `guardrails:` list as written (LiteLLM's format: `guardrail_name`, `litellm_params`, …),
   * unvalidated: the guardrails module parses it.
   */
  guardrails: unknown[];
  /** `mcp_servers:`, the upstream MCP servers behind `/mcp` (`config/mcp-servers.ts`); absent: none. */
  mcpServers?: McpServerConfig[];
  /** `litellm_settings.cache: true` with its `cache_params` (config/cache-params.ts); absent: no response cache. */
  responseCache?: ResponseCacheSettings;
  /** `general_settings.master_key`, resolved; GATEWAY_MASTER_KEY wins over it. */
  masterKey?: string;
  /**
   * `general_settings.stream_client_idle_timeout` × 1000: ms a stream's client may read nothing before the
   * stream is ended; undefined when not set (the pipeline's default, 60 s).
   */
  streamClientIdleTimeoutMs?: number;
}
