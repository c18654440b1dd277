/**
 * Puts one finished chat call into the gateway's metrics: tokens, spend and latencies under LiteLLM's names,
 * the budget gauges of the key and user it was booked on, the upstream's remaining rate limits, and the
 * deployment's state series. Called once per call by the accounting step; does no I/O.
 */
import type { Deployment } from "../config/types.js";
import type { LimitSubject } from "../limits/types.js";
import type { GatewayMetrics } from "./metrics.js";

const MS_PER_HOUR = 3_600_000;

/** Everything about a finished call the metrics need. Times in ms, money in USD. */
export interface CallMetricFacts {
  /** Caller labels: a key's SHA-256 hex (or `master_key`), its alias and its user (`""` when none). */
  caller: { hashed_api_key: string; api_key_alias: string; user: string };
  /** Budgets the call was booked on (`VirtualKeyAuth.subjects`: the key's, then its user's); empty for the master key. */
  subjects: readonly LimitSubject[];
  /** The alias the client asked for; must be a configured `model_name` (it is, once the router answered). */
  requestedModel: string;
  /** The deployment that answered. */
  deployment: Deployment;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Cost of this call, USD. */
  cost: number;
  /** From arrival to the last byte sent, ms. */
  totalMs: number;
  /** Time spent waiting on the upstream (failed attempts and backoff included), ms. */
  upstreamMs: number;
  /** Response headers of the upstream's answer, when known (`x-ratelimit-remaining-requests`/`-tokens`). */
  upstreamHeaders?: Readonly<Record<string, string | string[] | undefined>>;
  /** Wall clock at the end of the call, epoch ms (budget reset countdowns). */
  nowEpochMs: number;
}

/** A header's value as a finite non-negative number, or undefined (absent, repeated, or not a number). */
function headerNumber(headers: CallMetricFacts["upstreamHeaders"], name: string): number | undefined {
  const raw = headers?.[name];
  if (typeof raw !== "string" || raw.trim() === "") return undefined;
  const value = Number(raw);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * Records a finished call.
 *
 * Budget gauges follow LiteLLM: remaining = max budget − (the subject's spend as read with the key + this
 * call's cost); `+Inf` for a subject without a budget; reset hours only for budgets with a period. The
 * `litellm_deployment_state` series of the deployment is created at 0 if the router has not set it yet (the
 * router owns its value; a call that was answered never lowers a state the router raised).
 */
export function recordCallMetrics(metrics: GatewayMetrics, facts: CallMetricFacts): void {
  const { caller, deployment: d } = facts;
  const model = `${d.provider}/${d.upstreamModel}`;
  metrics.spend.inc({ ...caller, model }, facts.cost);
  const tokenLabels = { ...caller, requested_model: facts.requestedModel, model, model_id: d.id };
  metrics.totalTokens.inc(tokenLabels, facts.totalTokens);
  metrics.inputTokens.inc(tokenLabels, facts.promptTokens);
  metrics.outputTokens.inc(tokenLabels, facts.completionTokens);

  const keyLabels = { hashed_api_key: caller.hashed_api_key, api_key_alias: caller.api_key_alias };
  metrics.totalLatency.observe(
    { requested_model: facts.requestedModel, model, ...keyLabels },
    facts.totalMs / 1000,
  );
  metrics.llmApiLatency.observe({ requested_model: facts.requestedModel, model }, facts.upstreamMs / 1000);
  metrics.overheadLatency.observe(
    { model_group: facts.requestedModel, api_provider: d.provider, litellm_model_name: d.upstreamModel },
    Math.max(0, facts.totalMs - facts.upstreamMs) / 1000,
  );

  metrics.deploymentState.inc(
    { litellm_model_name: d.upstreamModel, model_id: d.id, api_base: d.apiBase, api_provider: d.provider },
    0,
  );
  recordUpstreamLimits(metrics, facts, keyLabels);
  for (const subject of facts.subjects) recordBudget(metrics, subject, facts);
}

function recordUpstreamLimits(
  metrics: GatewayMetrics,
  facts: CallMetricFacts,
  keyLabels: { hashed_api_key: string; api_key_alias: string },
): void {
  const requests = headerNumber(facts.upstreamHeaders, "x-ratelimit-remaining-requests");
  const tokens = headerNumber(facts.upstreamHeaders, "x-ratelimit-remaining-tokens");
  if (requests === undefined && tokens === undefined) return;
  const d = facts.deployment;
  const labels = {
    model_group: facts.requestedModel,
    api_provider: d.provider,
    api_base: d.apiBase,
    litellm_model_name: d.upstreamModel,
    model_id: d.id,
    ...keyLabels,
  };
  if (requests !== undefined) metrics.remainingRequests.set(labels, requests);
  if (tokens !== undefined) metrics.remainingTokens.set(labels, tokens);
}

function recordBudget(metrics: GatewayMetrics, subject: LimitSubject, facts: CallMetricFacts): void {
  const max = subject.maxBudget ?? Number.POSITIVE_INFINITY;
  const remaining = max - (subject.spend + facts.cost);
  const hours =
    subject.budgetResetAt === null
      ? undefined
      : Math.max(0, subject.budgetResetAt - facts.nowEpochMs) / MS_PER_HOUR;
  if (subject.scope === "key") {
    const own = subject.id === facts.caller.hashed_api_key;
    const labels = {
      hashed_api_key: subject.id,
      api_key_alias: own ? facts.caller.api_key_alias : (subject.alias ?? ""),
    };
    metrics.apiKeyMaxBudget.set(labels, max);
    metrics.remainingApiKeyBudget.set(labels, remaining);
    if (hours !== undefined) metrics.apiKeyBudgetRemainingHours.set(labels, hours);
  } else {
    const labels = { user: subject.id };
    metrics.userMaxBudget.set(labels, max);
    metrics.remainingUserBudget.set(labels, remaining);
    if (hours !== undefined) metrics.userBudgetRemainingHours.set(labels, hours);
  }
}
