/**
 * Puts one finished chat call into the gateway's metrics: tokens, spend and latencies under LiteLLM's names,
 * the budget gauges of the key and user it was booked on, the upstream's remaining rate limits, and the
 * deployment's state series. Called once per call by the accounting step; does no I/O.
 */
import type { Deployment } from "../config/types.js";
import type { LimitSubject } from "../limits/types.js";
import { type PendingSeries, seriesKey } from "./counter-batch.js";
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

/** The series one (caller, requested model, deployment) writes on every call, made once. */
interface CallSeries {
  spend: PendingSeries;
  totalTokens: PendingSeries;
  inputTokens: PendingSeries;
  outputTokens: PendingSeries;
  totalLatency: Record<string, string>;
  llmApiLatency: Record<string, string>;
  overheadLatency: Record<string, string>;
}

/** The request/failure counter series of one label set. */
type SeriesCache = Map<string, PendingSeries>;

interface Caches {
  calls: Map<string, CallSeries>;
  requests: SeriesCache;
  failures: SeriesCache;
}

const caches = new WeakMap<GatewayMetrics, Caches>();

function cachesOf(metrics: GatewayMetrics): Caches {
  let found = caches.get(metrics);
  if (found === undefined) {
    found = { calls: new Map(), requests: new Map(), failures: new Map() };
    caches.set(metrics, found);
  }
  return found;
}

function newCallSeries(metrics: GatewayMetrics, facts: CallMetricFacts): CallSeries {
  const { caller, deployment: d, requestedModel } = facts;
  const model = `${d.provider}/${d.upstreamModel}`;
  const tokenLabels = { ...caller, requested_model: requestedModel, model, model_id: d.id };
  const { batch } = metrics;
  // Created at 0 if the router has not set it yet; the router owns its value.
  metrics.deploymentState.inc(
    { litellm_model_name: d.upstreamModel, model_id: d.id, api_provider: d.provider },
    0,
  );
  return {
    spend: batch.series(metrics.spend, { ...caller, model }),
    totalTokens: batch.series(metrics.totalTokens, tokenLabels),
    inputTokens: batch.series(metrics.inputTokens, tokenLabels),
    outputTokens: batch.series(metrics.outputTokens, tokenLabels),
    totalLatency: {
      requested_model: requestedModel,
      model,
      hashed_api_key: caller.hashed_api_key,
      api_key_alias: caller.api_key_alias,
    },
    llmApiLatency: { requested_model: requestedModel, model },
    overheadLatency: {
      model_group: requestedModel,
      api_provider: d.provider,
      litellm_model_name: d.upstreamModel,
    },
  };
}

/**
 * Records a finished call.
 *
 * Budget gauges follow LiteLLM: remaining = max budget − (the subject's spend as read with the key + this
 * call's cost); `+Inf` for a subject without a budget; reset hours only for budgets with a period. The
 * `litellm_deployment_state` series of the deployment is created at 0 if the router has not set it yet (the
 * router owns its value; a call that was answered never lowers a state the router raised). The counters go
 * through `metrics.batch`; each label set's series and label objects are made once.
 */
export function recordCallMetrics(metrics: GatewayMetrics, facts: CallMetricFacts): void {
  const { caller, deployment: d } = facts;
  const { calls } = cachesOf(metrics);
  const key = seriesKey([
    caller.hashed_api_key,
    caller.api_key_alias,
    caller.user,
    facts.requestedModel,
    d.id,
  ]);
  let series = calls.get(key);
  if (series === undefined) {
    series = newCallSeries(metrics, facts);
    calls.set(key, series);
  }
  const { batch } = metrics;
  batch.add(series.spend, facts.cost);
  batch.add(series.totalTokens, facts.totalTokens);
  batch.add(series.inputTokens, facts.promptTokens);
  batch.add(series.outputTokens, facts.completionTokens);

  metrics.totalLatency.observe(series.totalLatency, facts.totalMs / 1000);
  metrics.llmApiLatency.observe(series.llmApiLatency, facts.upstreamMs / 1000);
  metrics.overheadLatency.observe(
    series.overheadLatency,
    Math.max(0, facts.totalMs - facts.upstreamMs) / 1000,
  );

  recordUpstreamLimits(metrics, facts);
  for (const subject of facts.subjects) recordBudget(metrics, subject, facts);
}

/**
 * Counts a finished model request in `litellm_proxy_total_requests_metric_total` and, for a status ≥ 400, in
 * `litellm_proxy_failed_requests_metric_total` (`exception_class` defaults to `error`). `route` is the
 * endpoint's canonical path from its description (`/v1/responses`), never the URL the client used: a fixed set.
 */
export function recordRequest(
  metrics: GatewayMetrics,
  caller: CallMetricFacts["caller"],
  route: string,
  requestedModel: string,
  status: number,
  errorType: string | undefined,
): void {
  const cache = cachesOf(metrics);
  const statusCode = String(status);
  const values = [
    caller.hashed_api_key,
    caller.api_key_alias,
    caller.user,
    route,
    requestedModel,
    statusCode,
  ];
  const key = seriesKey(values);
  let requests = cache.requests.get(key);
  if (requests === undefined) {
    requests = metrics.batch.series(metrics.requests, {
      ...caller,
      route,
      requested_model: requestedModel,
      status_code: statusCode,
    });
    cache.requests.set(key, requests);
  }
  metrics.batch.add(requests, 1);
  if (status < 400) return;
  const exceptionClass = errorType ?? "error";
  values.push(exceptionClass);
  const failureKey = seriesKey(values);
  let failures = cache.failures.get(failureKey);
  if (failures === undefined) {
    failures = metrics.batch.series(metrics.failures, {
      ...caller,
      route,
      requested_model: requestedModel,
      exception_status: statusCode,
      exception_class: exceptionClass,
    });
    cache.failures.set(failureKey, failures);
  }
  metrics.batch.add(failures, 1);
}

function recordUpstreamLimits(metrics: GatewayMetrics, facts: CallMetricFacts): void {
  const requests = headerNumber(facts.upstreamHeaders, "x-ratelimit-remaining-requests");
  const tokens = headerNumber(facts.upstreamHeaders, "x-ratelimit-remaining-tokens");
  if (requests === undefined && tokens === undefined) return;
  const d = facts.deployment;
  const labels = {
    model_group: facts.requestedModel,
    api_provider: d.provider,
    litellm_model_name: d.upstreamModel,
    model_id: d.id,
    hashed_api_key: facts.caller.hashed_api_key,
    api_key_alias: facts.caller.api_key_alias,
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
