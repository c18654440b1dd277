/**
 * Puts one finished chat call into the gateway's metrics: tokens, spend and latencies under LiteLLM's names,
 * the budget gauges of the key and user it was booked on, the upstream's remaining rate limits, and the
 * deployment's state series. Called once per call by the accounting step; does no I/O.
 */

import type { Deployment } from "../config/types.js";
import type { LimitSubject } from "../limits/types.js";
import type { UsageBreakdown } from "../usage/types.js";
import type { CallerLabels, GatewayMetrics } from "./metrics.js";
import { type BudgetSeries, MAX_LAST_BUDGETS, recordBudgets } from "./record-budgets.js";
import { seriesKey } from "./series-store.js";

/** Everything about a finished call the metrics need. Times in ms, money in USD. */
export interface CallMetricFacts {
  /**
   * Caller labels: a key's SHA-256 hex (or `master_key`), its alias, its user, its team id and the team's alias
   * (`""` when none; {@link CallerLabels}).
   */
  caller: CallerLabels;
  /** Budgets the call was booked on (`VirtualKeyAuth.subjects`: the key's, then its user's); empty for the master key. */
  subjects: readonly LimitSubject[];
  /** The alias the client asked for; must be a configured `model_name` (it is, once the router answered). */
  requestedModel: string;
  /** The deployment that answered. */
  deployment: Deployment;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** How the tokens divide (cache reads and writes, audio, reasoning), when the upstream reported its usage. */
  breakdown?: UsageBreakdown;
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
  /** Slots of the counters' series (`CompactCounter.series`; the three token counters share theirs). */
  spend: number;
  tokens: number;
  /** Slots of the latency histograms' series (`CompactHistogram.series`). */
  totalLatency: number;
  llmApiLatency: number;
  overheadLatency: number;
  /** Slot of the remaining-limit gauges' series (`CompactGauge.series`; the two share their slots). */
  limits: number;
  /** The budget series this call's subjects used last time (a key's and a user's: the same call after call). */
  lastBudgets: BudgetSeries[];
}

interface Caches {
  calls: Map<string, CallSeries>;
  /** The request and failure counters' slots by label set. */
  requests: Map<string, number>;
  failures: Map<string, number>;
  timeToFirstToken: Map<string, number>;
}

const caches = new WeakMap<GatewayMetrics, Caches>();

function cachesOf(metrics: GatewayMetrics): Caches {
  let found = caches.get(metrics);
  if (found === undefined) {
    found = {
      calls: new Map(),
      requests: new Map(),
      failures: new Map(),
      timeToFirstToken: new Map(),
    };
    caches.set(metrics, found);
  }
  return found;
}

/**
 * Adds what a series cache key needs of the caller's team to `values` (the key's hash and alias, its user, …):
 * nothing for a key without a team, which keeps the common call's key as short as before teams. A key's team is
 * fixed when the key is made (`/key/update` refuses a `team_id`), so its hash already stands for `team`; only the
 * team's alias can change under the same hash, and a non-empty one is appended (a key of 1 more value never
 * equals one without it: `seriesKey` prefixes each value with its length).
 */
function withTeamAlias(values: string[], caller: CallerLabels): void {
  if (caller.team_alias !== "") values.push(caller.team_alias);
}

/** The `model` label of each deployment: one string per deployment, not one per caller. */
const modelLabels = new WeakMap<Deployment, string>();

/** `provider/upstream model` of `d`. */
function modelLabel(d: Deployment): string {
  let label = modelLabels.get(d);
  if (label === undefined) {
    label = `${d.provider}/${d.upstreamModel}`;
    modelLabels.set(d, label);
  }
  return label;
}

function newCallSeries(metrics: GatewayMetrics, facts: CallMetricFacts): CallSeries {
  const { caller, deployment: d, requestedModel } = facts;
  const model = modelLabel(d);
  const { hashed_api_key, api_key_alias, user, team, team_alias } = caller;
  // Label objects spelled out: a spread copy keeps the added labels out of the object, in a larger store.
  const tokenLabels = {
    hashed_api_key,
    api_key_alias,
    user,
    team,
    team_alias,
    requested_model: requestedModel,
    model,
    model_id: d.id,
  };
  // Created at 0 if the router has not set it yet; the router owns its value.
  metrics.deploymentState.inc(
    { litellm_model_name: d.upstreamModel, model_id: d.id, api_provider: d.provider },
    0,
  );
  const limitLabels = {
    model_group: requestedModel,
    api_provider: d.provider,
    litellm_model_name: d.upstreamModel,
    model_id: d.id,
    hashed_api_key,
    api_key_alias,
  };
  return {
    spend: metrics.spend.series({ hashed_api_key, api_key_alias, user, team, team_alias, model }),
    tokens: metrics.totalTokens.series(tokenLabels),
    totalLatency: metrics.totalLatency.series({
      requested_model: requestedModel,
      model,
      hashed_api_key,
      api_key_alias,
    }),
    llmApiLatency: metrics.llmApiLatency.series({ requested_model: requestedModel, model }),
    overheadLatency: metrics.overheadLatency.series({
      model_group: requestedModel,
      api_provider: d.provider,
      litellm_model_name: d.upstreamModel,
    }),
    limits: metrics.remainingRequests.series(limitLabels),
    // Sized to the call's subjects: an empty array grows to 17 slots at its first write.
    lastBudgets: new Array(Math.min(facts.subjects.length, MAX_LAST_BUDGETS)),
  };
}

/** The breakdown's non-zero parts into the token-detail counters (sparse, as LiteLLM's). */
function recordTokenDetails(metrics: GatewayMetrics, slot: number, b: UsageBreakdown): void {
  const writes = b.cache_write_5m + b.cache_write_1h;
  if (b.cache_read > 0) metrics.inputCachedTokens.add(slot, b.cache_read);
  if (writes > 0) metrics.inputCacheCreationTokens.add(slot, writes);
  if (b.input_audio > 0) metrics.inputAudioTokens.add(slot, b.input_audio);
  if (b.output_reasoning > 0) metrics.outputReasoningTokens.add(slot, b.output_reasoning);
  if (b.output_audio > 0) metrics.outputAudioTokens.add(slot, b.output_audio);
}

/**
 * Records a finished call.
 *
 * The key's, user's and team's budget gauges follow LiteLLM (`record-budgets.ts`). The `litellm_deployment_state`
 * series of the deployment is created at 0 if the router has not set it yet (the router owns its value; a call
 * that was answered never lowers a state the router raised). Counters and histograms are written by slot (`add`,
 * `observeSeries`), gauges too (`setSeries`); each label set's slots are made once.
 */
export function recordCallMetrics(metrics: GatewayMetrics, facts: CallMetricFacts): void {
  const { caller, deployment: d } = facts;
  const { calls } = cachesOf(metrics);
  const values = [caller.hashed_api_key, caller.api_key_alias, caller.user, facts.requestedModel, d.id];
  withTeamAlias(values, caller);
  const key = seriesKey(values);
  let series = calls.get(key);
  if (series === undefined) {
    series = newCallSeries(metrics, facts);
    calls.set(key, series);
  }
  metrics.spend.add(series.spend, facts.cost);
  metrics.totalTokens.add(series.tokens, facts.totalTokens);
  metrics.inputTokens.add(series.tokens, facts.promptTokens);
  metrics.outputTokens.add(series.tokens, facts.completionTokens);
  if (facts.breakdown !== undefined) recordTokenDetails(metrics, series.tokens, facts.breakdown);

  metrics.totalLatency.observeSeries(series.totalLatency, facts.totalMs / 1000);
  metrics.llmApiLatency.observeSeries(series.llmApiLatency, facts.upstreamMs / 1000);
  metrics.overheadLatency.observeSeries(
    series.overheadLatency,
    Math.max(0, facts.totalMs - facts.upstreamMs) / 1000,
  );

  recordUpstreamLimits(metrics, series, facts.upstreamHeaders);
  recordBudgets(metrics, series.lastBudgets, facts);
}

/**
 * Observes a stream's time to its first forwarded chunk (`litellm_llm_api_time_to_first_token_metric`, labels
 * requested_model and `provider/upstream model`).
 * @param requestedModel a bounded label value (a configured alias).
 * @param seconds from the request's arrival to the first chunk forwarded; finite.
 * @throws TypeError when `seconds` is not finite.
 */
export function recordTimeToFirstToken(
  metrics: GatewayMetrics,
  requestedModel: string,
  deployment: Deployment,
  seconds: number,
): void {
  const cache = cachesOf(metrics).timeToFirstToken;
  const key = seriesKey([requestedModel, deployment.provider, deployment.upstreamModel]);
  let series = cache.get(key);
  if (series === undefined) {
    series = metrics.timeToFirstToken.series({
      requested_model: requestedModel,
      model: modelLabel(deployment),
    });
    cache.set(key, series);
  }
  metrics.timeToFirstToken.observeSeries(series, seconds);
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
  withTeamAlias(values, caller);
  const key = seriesKey(values);
  let requests = cache.requests.get(key);
  if (requests === undefined) {
    requests = metrics.requests.series({
      hashed_api_key: caller.hashed_api_key,
      api_key_alias: caller.api_key_alias,
      user: caller.user,
      team: caller.team,
      team_alias: caller.team_alias,
      route,
      requested_model: requestedModel,
      status_code: statusCode,
    });
    cache.requests.set(key, requests);
  }
  metrics.requests.add(requests, 1);
  if (status < 400) return;
  const exceptionClass = errorType ?? "error";
  values.push(exceptionClass);
  const failureKey = seriesKey(values);
  let failures = cache.failures.get(failureKey);
  if (failures === undefined) {
    failures = metrics.failures.series({
      hashed_api_key: caller.hashed_api_key,
      api_key_alias: caller.api_key_alias,
      user: caller.user,
      team: caller.team,
      team_alias: caller.team_alias,
      route,
      requested_model: requestedModel,
      exception_status: statusCode,
      exception_class: exceptionClass,
    });
    cache.failures.set(failureKey, failures);
  }
  metrics.failures.add(failures, 1);
}

function recordUpstreamLimits(
  metrics: GatewayMetrics,
  series: CallSeries,
  headers: CallMetricFacts["upstreamHeaders"],
): void {
  const requests = headerNumber(headers, "x-ratelimit-remaining-requests");
  const tokens = headerNumber(headers, "x-ratelimit-remaining-tokens");
  if (requests !== undefined) metrics.remainingRequests.setSeries(series.limits, requests);
  if (tokens !== undefined) metrics.remainingTokens.setSeries(series.limits, tokens);
}
