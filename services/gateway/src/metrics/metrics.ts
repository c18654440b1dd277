/**
 * Prometheus metrics under LiteLLM's names and labels (docs/my-website/docs/proxy/prometheus.md and
 * litellm/types/integrations/prometheus.py in BerriAI/litellm), so dashboards built for LiteLLM work
 * unchanged. Counters are exposed with the `_total` suffix (`litellm_proxy_total_requests_metric_total`,
 * `litellm_total_tokens_metric_total`), as LiteLLM's Grafana dashboards
 * (cookbook/litellm_proxy_server/grafana_dashboard/) query them. Latencies are in seconds, money in USD.
 *
 * With several workers (GATEWAY_WORKERS > 1) GET /metrics sums the workers' counters and histograms; each gauge
 * names its `aggregator` (docs/operations.md): the worst deployment state (max), the lowest remaining
 * upstream limit and budget and the fewest hours to a reset (min: within a period the lowest reading is the
 * latest), and a budget's size (max: the same in every worker that has seen the key).
 *
 * Every label value is bounded: key hashes and aliases of existing keys, user ids of existing users, team ids and
 * aliases of existing teams (read with the key, never from the request), model aliases and deployments of the
 * config. A value a client picks freely never becomes a label.
 */
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { CompactCounter } from "./compact-counter.js";
import { CompactGauge } from "./compact-gauge.js";
import { CompactHistogram } from "./compact-histogram.js";
import { LabelIndex } from "./series-store.js";

/**
 * Labels identifying the caller on the request, spend and token metrics (LiteLLM's label names). `team` is the
 * key's `team_id` and `team_alias` its team's alias, both read from the database with the key (never from the
 * request), `""` for a key without a team and for the master key.
 */
export interface CallerLabels {
  hashed_api_key: string;
  api_key_alias: string;
  user: string;
  team: string;
  team_alias: string;
}

/** The caller's labels ({@link CallerLabels}): key, its alias, its user, its team and the team's alias. */
const keyLabels = ["hashed_api_key", "api_key_alias", "user", "team", "team_alias"] as const;
type CallerLabel = (typeof keyLabels)[number];
const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const overheadBuckets = [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5];

/** The gateway's metrics, all on one registry. */
export interface GatewayMetrics {
  registry: Registry;
  /**
   * The per-call counters keep their series compactly (`compact-counter.ts`); write them per label set through
   * `series`/`add` on the request path.
   *
   * Requests answered, by status (labels: hashed_api_key, api_key_alias, user, team, team_alias, route,
   * requested_model, status_code; `team`/`team_alias` are `""` for a key without a team, as LiteLLM's). `route` is the endpoint's canonical path (`/v1/chat/completions`, `/v1/responses`, …), as
   * LiteLLM labels it.
   */
  requests: CompactCounter<CallerLabel | "route" | "requested_model" | "status_code">;
  /** Failed requests (labels: …, route, requested_model, exception_status, exception_class). */
  failures: CompactCounter<
    CallerLabel | "route" | "requested_model" | "exception_status" | "exception_class"
  >;
  /** USD spent (labels: …, model). */
  spend: CompactCounter<CallerLabel | "model">;
  /** `litellm_total_tokens_metric_total`: prompt + completion tokens (labels: …, requested_model, model, model_id). */
  totalTokens: CompactCounter<TokenLabel>;
  /** `litellm_input_tokens_metric_total`: prompt tokens. */
  inputTokens: CompactCounter<TokenLabel>;
  /** `litellm_output_tokens_metric_total`: completion tokens. */
  outputTokens: CompactCounter<TokenLabel>;
  /**
   * The breakdown of the input and output tokens (LiteLLM's detail counters, docs proxy/prometheus.md "Token
   * details"), same labels as the token counters, sparse (a series appears with the first call that reports the
   * part): `litellm_input_cached_tokens_metric_total` (read from the provider's prompt cache),
   * `litellm_input_cache_creation_tokens_metric_total` (written to it, 5-minute and 1-hour together),
   * `litellm_input_audio_tokens_metric_total`, `litellm_output_reasoning_tokens_metric_total`,
   * `litellm_output_audio_tokens_metric_total`.
   */
  inputCachedTokens: CompactCounter<TokenLabel>;
  inputCacheCreationTokens: CompactCounter<TokenLabel>;
  inputAudioTokens: CompactCounter<TokenLabel>;
  outputReasoningTokens: CompactCounter<TokenLabel>;
  outputAudioTokens: CompactCounter<TokenLabel>;
  /**
   * Whole request, seconds (for streams: until the last byte). The histograms keep their series compactly
   * (`compact-histogram.ts`: one per key here); observe them per label set through `series`/`observeSeries`.
   */
  totalLatency: CompactHistogram<"requested_model" | "model" | "hashed_api_key" | "api_key_alias">;
  /** Time the gateway itself added, seconds: total minus time spent waiting on the upstream. */
  overheadLatency: CompactHistogram<"model_group" | "api_provider" | "litellm_model_name">;
  /** Upstream call, seconds (for streams: until the upstream's last byte). */
  llmApiLatency: CompactHistogram<"requested_model" | "model">;
  /** Streams: from the request's arrival to the first chunk forwarded, seconds. */
  timeToFirstToken: CompactHistogram<"requested_model" | "model">;
  /** 0 healthy, 1 partial outage (cooling down after failures), 2 complete outage. LiteLLM labels it with
   * `api_base` too; the gateway leaves that label out so that no upstream URL leaves through /metrics. */
  deploymentState: Gauge<"litellm_model_name" | "model_id" | "api_provider">;
  /**
   * `gateway_output_cap_overruns_total`: answers with more output tokens than the cap the deployment was sent
   * (the call's own `max_tokens`, or the cap the gateway added). Booked at their true cost, but past what was
   * reserved: a deployment that ignores caps can spend past a budget on non-streamed calls.
   */
  outputCapOverruns: Counter<"litellm_model_name" | "model_id" | "api_provider">;
  /**
   * The per-call gauges (remaining upstream limits, budgets) keep their series compactly (`compact-gauge.ts`);
   * set them per label set through `series`/`setSeries` on the request path. The two limit gauges share their
   * label sets' slots, and so do the three budget gauges of a scope.
   *
   * The upstream's `x-ratelimit-remaining-requests` as last seen on a response of the deployment.
   */
  remainingRequests: CompactGauge<DeploymentLimitLabel>;
  /** The upstream's `x-ratelimit-remaining-tokens` as last seen on a response of the deployment. */
  remainingTokens: CompactGauge<DeploymentLimitLabel>;
  /** A key's budget, USD (`+Inf` when it has none). */
  apiKeyMaxBudget: CompactGauge<"hashed_api_key" | "api_key_alias">;
  /** A key's budget left in the current period, USD (`+Inf` when it has none; negative when overspent). */
  remainingApiKeyBudget: CompactGauge<"hashed_api_key" | "api_key_alias">;
  /** Hours until a key's budget period resets (absent for lifetime budgets). */
  apiKeyBudgetRemainingHours: CompactGauge<"hashed_api_key" | "api_key_alias">;
  /** A user's budget, USD (`+Inf` when they have none). */
  userMaxBudget: CompactGauge<"user">;
  /** A user's budget left in the current period, USD. */
  remainingUserBudget: CompactGauge<"user">;
  /** Hours until a user's budget period resets. */
  userBudgetRemainingHours: CompactGauge<"user">;
  /** A team's budget, USD (`+Inf` when it has none); `team` is the team_id, `team_alias` its alias or "". */
  teamMaxBudget: CompactGauge<"team" | "team_alias">;
  /** A team's budget left in the current period, USD (negative when overspent). */
  remainingTeamBudget: CompactGauge<"team" | "team_alias">;
  /** Hours until a team's budget period resets (absent for lifetime budgets). */
  teamBudgetRemainingHours: CompactGauge<"team" | "team_alias">;
}

/**
 * The three budget gauges of one scope under LiteLLM's names: `litellm_<scope>_max_budget_metric` (USD, the
 * highest reported across workers), `litellm_remaining_<scope>_budget_metric` (USD, the lowest) and
 * `litellm_<scope>_budget_remaining_hours_metric` (hours, the lowest), on one label index. Names from LiteLLM's
 * Prometheus docs (docs.litellm.ai/docs/proxy/prometheus, "Budget & Limits").
 */
function budgetGauges<K extends keyof GatewayMetrics, L extends string>(
  fields: { max: K; remaining: K; hours: K },
  scope: string,
  who: string,
  labelNames: readonly L[],
  registers: Registry[],
): Record<K, CompactGauge<L>> {
  const index = new LabelIndex(labelNames);
  const gauge = (name: string, aggregator: "max" | "min", help: string) =>
    new CompactGauge<L>({ name, aggregator, help, labelNames, index, registers });
  return {
    [fields.max]: gauge(`litellm_${scope}_max_budget_metric`, "max", `Maximum budget set for ${who}, USD`),
    [fields.remaining]: gauge(
      `litellm_remaining_${scope}_budget_metric`,
      "min",
      `Remaining budget for ${who} in its current period, USD`,
    ),
    [fields.hours]: gauge(
      `litellm_${scope}_budget_remaining_hours_metric`,
      "min",
      `Hours before the budget of ${who} is reset`,
    ),
  } as Record<K, CompactGauge<L>>;
}

type TokenLabel = CallerLabel | "requested_model" | "model" | "model_id";
type DeploymentLimitLabel =
  | "model_group"
  | "api_provider"
  | "litellm_model_name"
  | "hashed_api_key"
  | "api_key_alias"
  | "model_id";

/** The token-detail counters of {@link GatewayMetrics} (`inputCachedTokens`, …), on the token counters' index. */
function tokenDetailCounters(
  labelNames: readonly TokenLabel[],
  index: LabelIndex,
  registers: Registry[],
): Pick<
  GatewayMetrics,
  | "inputCachedTokens"
  | "inputCacheCreationTokens"
  | "inputAudioTokens"
  | "outputReasoningTokens"
  | "outputAudioTokens"
> {
  const counter = (name: string, help: string) =>
    new CompactCounter<TokenLabel>({ name, help, labelNames, index, registers });
  return {
    inputCachedTokens: counter(
      "litellm_input_cached_tokens_metric_total",
      "Input tokens read from the provider's prompt cache",
    ),
    inputCacheCreationTokens: counter(
      "litellm_input_cache_creation_tokens_metric_total",
      "Input tokens written to the provider's prompt cache",
    ),
    inputAudioTokens: counter("litellm_input_audio_tokens_metric_total", "Audio input tokens"),
    outputReasoningTokens: counter(
      "litellm_output_reasoning_tokens_metric_total",
      "Reasoning (thinking) output tokens",
    ),
    outputAudioTokens: counter("litellm_output_audio_tokens_metric_total", "Audio output tokens"),
  };
}

/** Creates the metrics on a fresh registry (one per gateway instance, so tests can run several). */
export function createMetrics(): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const requestLabels = [...keyLabels, "route", "requested_model"] as const;
  const spendLabels = [...keyLabels, "model"] as const;
  const tokenLabels = [...keyLabels, "requested_model", "model", "model_id"] as const;
  const deploymentLimitLabels = [
    "model_group",
    "api_provider",
    "litellm_model_name",
    "hashed_api_key",
    "api_key_alias",
    "model_id",
  ] as const;
  const keyBudgetLabels = ["hashed_api_key", "api_key_alias"] as const;
  // The token counters share their label sets' slots (and keys).
  const tokenIndex = new LabelIndex(tokenLabels);
  // So do the gauges of a deployment's limits (and the budget gauges of a scope: budgetGauges).
  const limitIndex = new LabelIndex(deploymentLimitLabels);
  return {
    registry,
    requests: new CompactCounter({
      name: "litellm_proxy_total_requests_metric_total",
      help: "Total requests made to the proxy, by status code",
      labelNames: [...requestLabels, "status_code"],
      registers,
    }),
    failures: new CompactCounter({
      name: "litellm_proxy_failed_requests_metric_total",
      help: "Failed responses from the proxy, by exception class and status",
      labelNames: [...requestLabels, "exception_status", "exception_class"],
      registers,
    }),
    spend: new CompactCounter({
      name: "litellm_spend_metric_total",
      help: "Total spend on LLM requests, USD",
      labelNames: spendLabels,
      registers,
    }),
    totalTokens: new CompactCounter({
      name: "litellm_total_tokens_metric_total",
      help: "Input + output tokens",
      labelNames: tokenLabels,
      index: tokenIndex,
      registers,
    }),
    inputTokens: new CompactCounter({
      name: "litellm_input_tokens_metric_total",
      help: "Input (prompt) tokens",
      labelNames: tokenLabels,
      index: tokenIndex,
      registers,
    }),
    outputTokens: new CompactCounter({
      name: "litellm_output_tokens_metric_total",
      help: "Output (completion) tokens",
      labelNames: tokenLabels,
      index: tokenIndex,
      registers,
    }),
    ...tokenDetailCounters(tokenLabels, tokenIndex, registers),
    totalLatency: new CompactHistogram({
      name: "litellm_request_total_latency_metric",
      help: "Total latency of a request through the gateway, seconds",
      labelNames: ["requested_model", "model", "hashed_api_key", "api_key_alias"],
      buckets: latencyBuckets,
      registers,
    }),
    overheadLatency: new CompactHistogram({
      name: "litellm_overhead_latency_metric",
      help: "Latency the gateway adds on top of the upstream call, seconds",
      labelNames: ["model_group", "api_provider", "litellm_model_name"],
      buckets: overheadBuckets,
      registers,
    }),
    llmApiLatency: new CompactHistogram({
      name: "litellm_llm_api_latency_metric",
      help: "Latency of the upstream LLM API call, seconds",
      labelNames: ["requested_model", "model"],
      buckets: latencyBuckets,
      registers,
    }),
    timeToFirstToken: new CompactHistogram({
      name: "litellm_llm_api_time_to_first_token_metric",
      help: "Time to the first streamed chunk, seconds",
      labelNames: ["requested_model", "model"],
      buckets: latencyBuckets,
      registers,
    }),
    outputCapOverruns: new Counter({
      name: "gateway_output_cap_overruns_total",
      help: "Answers with more output tokens than the cap the deployment was sent",
      labelNames: ["litellm_model_name", "model_id", "api_provider"],
      registers,
    }),
    deploymentState: new Gauge({
      name: "litellm_deployment_state",
      aggregator: "max",
      help: "Deployment state: 0 healthy, 1 partial outage, 2 complete outage",
      labelNames: ["litellm_model_name", "model_id", "api_provider"],
      registers,
    }),
    remainingRequests: new CompactGauge({
      name: "litellm_remaining_requests_metric",
      aggregator: "min",
      help: "x-ratelimit-remaining-requests returned by the LLM API deployment",
      labelNames: deploymentLimitLabels,
      registers,
      index: limitIndex,
    }),
    remainingTokens: new CompactGauge({
      name: "litellm_remaining_tokens_metric",
      aggregator: "min",
      help: "x-ratelimit-remaining-tokens returned by the LLM API deployment",
      labelNames: deploymentLimitLabels,
      registers,
      index: limitIndex,
    }),
    ...budgetGauges(
      { max: "apiKeyMaxBudget", remaining: "remainingApiKeyBudget", hours: "apiKeyBudgetRemainingHours" },
      "api_key",
      "the API key",
      keyBudgetLabels,
      registers,
    ),
    ...budgetGauges(
      { max: "userMaxBudget", remaining: "remainingUserBudget", hours: "userBudgetRemainingHours" },
      "user",
      "the user",
      ["user"],
      registers,
    ),
    ...budgetGauges(
      { max: "teamMaxBudget", remaining: "remainingTeamBudget", hours: "teamBudgetRemainingHours" },
      "team",
      "the team",
      ["team", "team_alias"],
      registers,
    ),
  };
}
