/**
 * Which keys of LiteLLM's proxy config (`litellm/config.yaml`) the gateway reads, which ones it accepts but
 * ignores (reported as warnings), and which ones it refuses because ignoring them would silently change what
 * the config means. Every other key is an error ("unknown key(s) …").
 *
 * Source of the key names: LiteLLM's docs, docs/my-website/docs/proxy/configs.md and
 * docs/my-website/docs/proxy/config_settings.md in BerriAI/litellm (the `*_settings - Reference` tables).
 */

import { PRICE_PART_KEY_NAMES } from "./price-keys.js";

/** The keys one mapping of the config may hold. */
export interface KeySet {
  /** Keys the gateway reads. */
  used: readonly string[];
  /** Keys LiteLLM knows and the gateway ignores: key → the reason given in the warning ("" for the generic one). */
  ignored: Readonly<Record<string, string>>;
  /** Keys LiteLLM knows that the gateway refuses: key → what to do instead. */
  unsupported?: Readonly<Record<string, string>>;
  /** When true, keys outside `used` are LiteLLM free-form metadata: ignored with a warning, never unknown. */
  open?: boolean;
}

const callbacks =
  "callbacks are not loaded; metrics go to /metrics and traces to Langfuse (TRACE_* variables)";
const noRedis = "set REDIS_URL in the gateway's environment instead";
const noFallbackKind = "only litellm_settings.fallbacks (all errors) is implemented";
const keysInDb = "virtual keys, users and budgets are managed through the gateway's admin API";

/** Names with the generic "ignored" reason. */
/** Why the parallel limits of deployments, the router and the whole proxy are accepted but not enforced. */
const PARALLEL_IGNORED =
  "only keys' and users' max_parallel_requests are enforced (set them through /key/generate, /user/new)";

const plain = (...names: string[]): Record<string, string> => Object.fromEntries(names.map((n) => [n, ""]));

/** The top level of the file. */
export const topLevelKeys: KeySet = {
  used: [
    "model_list",
    "router_settings",
    "litellm_settings",
    "general_settings",
    "environment_variables",
    "guardrails",
    "mcp_servers",
  ],
  ignored: {
    credential_list: "put api_key/api_base in each entry's litellm_params (os.environ/VAR)",
    callback_settings: callbacks,
    ...plain("assistant_settings", "files_settings", "finetune_settings", "search_tools"),
  },
  unsupported: {
    include: "merge the included files into this one; the gateway reads a single file",
  },
};

/** One `model_list[]` entry. */
export const modelEntryKeys: KeySet = {
  used: ["model_name", "litellm_params", "model_info"],
  ignored: {},
};

/** `model_list[].litellm_params`. */
export const litellmParamsKeys: KeySet = {
  used: [
    "model",
    "api_base",
    "api_key",
    "rpm",
    "tpm",
    "input_cost_per_token",
    "output_cost_per_token",
    ...PRICE_PART_KEY_NAMES,
    "timeout",
    "stream_timeout",
    "weight",
    "tags",
    "cache_control_injection_points",
  ],
  ignored: {
    temperature: "the gateway forwards the client's request parameters unchanged",
    max_tokens: "the gateway forwards the client's request parameters unchanged",
    top_p: "the gateway forwards the client's request parameters unchanged",
    stop: "the gateway forwards the client's request parameters unchanged",
    seed: "the gateway forwards the client's request parameters unchanged",
    reasoning_effort: "the gateway forwards the client's request parameters unchanged",
    drop_params: "the gateway forwards the client's request parameters unchanged",
    additional_drop_params: "the gateway forwards the client's request parameters unchanged",
    max_retries: "retries are set by router_settings.num_retries",
    num_retries: "retries are set by router_settings.num_retries",
    max_parallel_requests: PARALLEL_IGNORED,
    ...plain(
      "organization",
      "api_version",
      "extra_headers",
      "headers",
      "mock_response",
      "use_in_pass_through",
      "merge_reasoning_content_in_choices",
      "order",
      "input_cost_per_second",
      "output_cost_per_second",
      "configurable_clientside_auth_params",
      "region_name",
    ),
  },
  unsupported: {
    custom_llm_provider: "write the provider as the prefix of litellm_params.model (openai/… or anthropic/…)",
    litellm_credential_name: "put api_key (os.environ/VAR) and api_base in litellm_params",
  },
};

/** `model_list[].model_info`: LiteLLM accepts any key here (free-form metadata). */
export const modelInfoKeys: KeySet = {
  used: [
    "id",
    "tags",
    "mode",
    "base_model",
    "supported_endpoints",
    "input_cost_per_token",
    "output_cost_per_token",
    "max_output_tokens",
    "ignores_output_cap",
    ...PRICE_PART_KEY_NAMES,
  ],
  ignored: {},
  open: true,
};

/** `litellm_settings`. */
export const litellmSettingsKeys: KeySet = {
  used: ["num_retries", "request_timeout", "fallbacks", "allowed_fails", "cache", "cache_params"],
  ignored: {
    success_callback: callbacks,
    failure_callback: callbacks,
    callbacks,
    service_callbacks: callbacks,
    drop_params: "the gateway forwards the client's request parameters unchanged",
    additional_drop_params: "the gateway forwards the client's request parameters unchanged",
    modify_params: "the gateway forwards the client's request parameters unchanged",
    set_verbose: "use LOG_LEVEL",
    json_logs: "use LOG_LEVEL",
    default_fallbacks: noFallbackKind,
    content_policy_fallbacks: noFallbackKind,
    context_window_fallbacks: noFallbackKind,
    max_budget: keysInDb,
    budget_duration: keysInDb,
    max_internal_user_budget: keysInDb,
    internal_user_budget_duration: keysInDb,
    default_internal_user_params: keysInDb,
    default_key_generate_params: keysInDb,
    upperbound_key_generate_params: keysInDb,
    key_generation_settings: keysInDb,
    default_team_settings: keysInDb,
    max_end_user_budget: keysInDb,
    ...plain(
      "turn_off_message_logging",
      "redact_user_api_key_info",
      "langfuse_default_tags",
      "force_ipv4",
      "mcp_aliases",
      "enable_preview_features",
      "disable_end_user_cost_tracking",
      "disable_end_user_cost_tracking_prometheus_only",
      "disable_add_transform_inline_image_block",
      "use_chat_completions_url_for_anthropic_messages",
      "disable_hf_tokenizer_download",
      "enable_json_schema_validation",
      "enable_key_alias_format_validation",
      "disable_copilot_system_to_assistant",
      "telemetry",
      "ssl_verify",
      "guardrails",
    ),
  },
};

/** `router_settings`. */
export const routerSettingsKeys: KeySet = {
  used: [
    "routing_strategy",
    "num_retries",
    "timeout",
    "stream_timeout",
    "allowed_fails",
    "cooldown_time",
    "fallbacks",
    "enable_tag_filtering",
    "tag_filtering_match_any",
  ],
  ignored: {
    redis_host: noRedis,
    redis_port: noRedis,
    redis_password: noRedis,
    redis_db: noRedis,
    redis_url: noRedis,
    content_policy_fallbacks: noFallbackKind,
    context_window_fallbacks: noFallbackKind,
    default_fallbacks: noFallbackKind,
    set_verbose: "use LOG_LEVEL",
    debug_level: "use LOG_LEVEL",
    default_max_parallel_requests: PARALLEL_IGNORED,
    ...plain(
      "enable_pre_call_checks",
      "enable_pre_call_check",
      "disable_cooldowns",
      "retry_policy",
      "allowed_fails_policy",
      "default_priority",
      "polling_interval",
      "max_fallbacks",
      "default_litellm_params",
      "client_ttl",
      "cache_kwargs",
      "cache_responses",
      "caching_groups",
      "routing_strategy_args",
      "model_group_alias",
      "retry_after",
      "provider_budget_config",
      "model_group_retry_policy",
      "optional_pre_call_checks",
      "deployment_affinity_ttl_seconds",
      "ignore_invalid_deployments",
      "search_tools",
      "guardrail_list",
    ),
  },
};

/** `general_settings`. */
export const generalSettingsKeys: KeySet = {
  used: ["master_key", "stream_client_idle_timeout"],
  ignored: {
    database_url: "set DATABASE_URL in the gateway's environment instead",
    max_request_size_mb: "set GATEWAY_MAX_REQUEST_SIZE_MB in the gateway's environment instead",
    alerting: "alerts come from Prometheus rules and Alertmanager",
    alerting_threshold: "alerts come from Prometheus rules and Alertmanager",
    alert_types: "alerts come from Prometheus rules and Alertmanager",
    alerting_args: "alerts come from Prometheus rules and Alertmanager",
    alert_to_webhook_url: "alerts come from Prometheus rules and Alertmanager",
    max_parallel_requests: PARALLEL_IGNORED,
    global_max_parallel_requests: PARALLEL_IGNORED,
    ...plain(
      "completion_model",
      "store_prompts_in_spend_logs",
      "forward_client_headers_to_llm_api",
      "forward_openai_org_id",
      "disable_spend_logs",
      "disable_spend_updates",
      "disable_master_key_return",
      "disable_retry_on_max_parallel_request_limit_error",
      "disable_reset_budget",
      "disable_adding_master_key_hash_to_db",
      "disable_responses_id_security",
      "enable_jwt_auth",
      "enforce_user_param",
      "reject_clientside_metadata_tags",
      "allowed_routes",
      "key_management_system",
      "key_management_settings",
      "maximum_spend_logs_retention_period",
      "maximum_spend_logs_retention_interval",
      "user_mcp_management_mode",
      "database_connection_pool_limit",
      "database_connection_timeout",
      "allow_requests_on_db_unavailable",
      "custom_auth",
      "infer_model_from_keys",
      "background_health_checks",
      "health_check_interval",
      "health_check_details",
      "use_client_credentials_pass_through_routes",
      "public_routes",
      "enforced_params",
      "enable_oauth2_auth",
      "enable_oauth2_proxy_auth",
      "use_x_forwarded_for",
      "service_account_settings",
      "image_generation_model",
      "embedding_model",
      "moderation_model",
      "store_model_in_db",
      "supported_db_objects",
      "max_response_size_mb",
      "proxy_budget_rescheduler_min_time",
      "proxy_budget_rescheduler_max_time",
      "proxy_batch_write_at",
      "proxy_batch_polling_interval",
      "custom_key_generate",
      "allowed_ips",
      "default_team_disabled",
      "allow_user_auth",
      "user_api_key_cache_ttl",
      "disable_prisma_schema_update",
      "litellm_key_header_name",
      "custom_sso",
      "allow_client_side_credentials",
      "admin_only_routes",
      "use_azure_key_vault",
      "use_google_kms",
      "spend_report_frequency",
      "ui_access_mode",
      "litellm_jwtauth",
      "litellm_license",
      "oauth2_config_mappings",
      "pass_through_endpoints",
    ),
  },
};
