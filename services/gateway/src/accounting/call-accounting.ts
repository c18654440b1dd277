/**
 * Everything that happens after a chat completion has been answered, in two parts: {@link measureCall} (tokens
 * and cost, for `x-litellm-response-cost`) and {@link recordCall} (settle the budget reservation, count tokens
 * and spend, record the spend log row, observe latencies), which runs after the response is handed to the
 * socket; neither does I/O itself.
 */
import type { AuthContext } from "../auth/types.js";
import type { Deployment } from "../config/types.js";
import { billOf } from "../cost/bill.js";
import { priceOf } from "../cost/pricing.js";
import type { Admission } from "../limits/types.js";
import type { CallerLabels, GatewayMetrics } from "../metrics/metrics.js";
import { recordCallMetrics } from "../metrics/record-call.js";
import type { SpendLogRow, SpendRecorder } from "../spend/types.js";
import type { Usage, UsageBreakdown } from "../usage/types.js";

const MASTER_LABELS: CallerLabels = Object.freeze({
  hashed_api_key: "master_key",
  api_key_alias: "",
  user: "",
  team: "",
  team_alias: "",
});

/** Metric labels for a caller (the same frozen object for every master-key call); the master key is labelled `master_key` (its hash is never exposed). */
export function callerLabels(auth: AuthContext): CallerLabels {
  if (auth.kind === "master") return MASTER_LABELS;
  return {
    hashed_api_key: auth.keyHash,
    api_key_alias: auth.keyAlias ?? "",
    user: auth.userId ?? "",
    team: auth.teamId ?? "",
    team_alias: auth.teamAlias ?? "",
  };
}

/** The spend row's caller columns (key hash, alias, user, team); all null for the master key. */
export function callerColumns(
  auth: AuthContext,
): Pick<SpendLogRow, "keyHash" | "keyAlias" | "userId" | "teamId"> {
  if (auth.kind !== "virtual") return { keyHash: null, keyAlias: null, userId: null, teamId: null };
  return { keyHash: auth.keyHash, keyAlias: auth.keyAlias, userId: auth.userId, teamId: auth.teamId ?? null };
}

/** One call's facts, gathered along the request path. Times are `performance.now()` ms unless noted. */
export interface CallRecord {
  requestId: string;
  auth: AuthContext;
  labels: CallerLabels;
  requestedModel: string;
  deployment: Deployment;
  admission: Admission | undefined;
  stream: boolean;
  /** LiteLLM's `call_type` of the endpoint (`acompletion`, `aembedding`, …). */
  callType: string;
  /** Epoch ms when the request arrived (spend log times). */
  startedAtEpoch: number;
  /** When the request arrived. */
  startedAt: number;
  /** Time the upstream spent: failed attempts, backoff and the successful call, ms. */
  upstreamMs: number;
  /** Prompt tokens estimated before the call (used when the upstream reports no usage). */
  estimatedPromptTokens: number;
  /** The response cache's key of the call, when it was looked up or stored (the spend row's `cache_key`). */
  cacheKey?: string;
  /** The upstream's response headers (its `x-ratelimit-remaining-*` feed the remaining-limit gauges). */
  upstreamHeaders?: Readonly<Record<string, string | string[] | undefined>>;
  /** Why the call failed though the upstream answered (`upstream_error`, `timeout`, …); undefined when it did not. */
  reason?: string | undefined;
}

/** Costs are kept to this many decimal places of USD (1e-10): no `0.00015000000000000001` in headers or rows. */
export const COST_DECIMALS = 10;

/** `usd` rounded to {@link COST_DECIMALS} decimal places. */
export function roundCost(usd: number): number {
  return Math.round(usd * 10 ** COST_DECIMALS) / 10 ** COST_DECIMALS;
}

/** A cost for a header: plain decimals (never exponent notation), at most {@link COST_DECIMALS}, e.g. `0.0003`. */
export function formatCost(usd: number): string {
  return roundCost(usd)
    .toFixed(COST_DECIMALS)
    .replace(/\.?0+$/, "");
}

/** What a finished call used and cost, measured when its answer is ready. */
export interface CallAmounts {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** How the tokens divide by price, when the upstream reported its usage (the spend row's `usage_details`). */
  breakdown?: UsageBreakdown;
  /** USD, rounded by {@link roundCost}: the provider's bill ({@link billOf}). */
  cost: number;
  /** From the request's arrival to now, ms. */
  totalMs: number;
  /** Epoch ms when measured (the spend row's end time). */
  endTime: number;
}

/**
 * Tokens and cost of a finished call: the upstream's `usage` with its breakdown, or the prompt estimate and
 * `fallbackCompletionTokens` when it reported none, billed at the deployment's prices (`cost/bill.ts`). No side
 * effects.
 */
export function measureCall(
  record: Pick<CallRecord, "deployment" | "estimatedPromptTokens" | "startedAt">,
  usage: Usage | undefined,
  fallbackCompletionTokens: number,
  now: () => number,
): CallAmounts {
  const promptTokens = usage?.prompt_tokens ?? record.estimatedPromptTokens;
  const completionTokens = usage?.completion_tokens ?? fallbackCompletionTokens;
  const breakdown = usage?.breakdown;
  return {
    promptTokens,
    completionTokens,
    totalTokens: usage?.total_tokens ?? promptTokens + completionTokens,
    ...(breakdown === undefined ? {} : { breakdown }),
    cost: roundCost(
      billOf(priceOf(record.deployment), {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        breakdown,
      }),
    ),
    totalMs: performance.now() - record.startedAt,
    endTime: now(),
  };
}

/**
 * Books a measured call: settles its admission (budget and token counters), observes its metrics and queues its
 * spend row. Synchronous, no I/O of its own; a non-streamed call runs it after the response is handed to the
 * socket.
 */
export function recordCall(
  record: CallRecord,
  amounts: CallAmounts,
  status: number,
  metrics: GatewayMetrics,
  spend: SpendRecorder | undefined,
): void {
  const { promptTokens, completionTokens, totalTokens, cost, endTime } = amounts;
  record.admission?.settle({ cost, totalTokens });

  const d = record.deployment;
  const subjects = record.auth.kind === "virtual" ? record.auth.subjects : [];
  recordCallMetrics(metrics, {
    caller: record.labels,
    subjects,
    requestedModel: record.requestedModel,
    deployment: d,
    promptTokens,
    completionTokens,
    totalTokens,
    ...(amounts.breakdown === undefined ? {} : { breakdown: amounts.breakdown }),
    cost,
    totalMs: amounts.totalMs,
    upstreamMs: record.upstreamMs,
    upstreamHeaders: record.upstreamHeaders,
    nowEpochMs: endTime,
  });

  spend?.record({
    requestId: record.requestId,
    ...callerColumns(record.auth),
    modelGroup: record.requestedModel,
    model: `${d.provider}/${d.upstreamModel}`,
    deploymentId: d.id,
    promptTokens,
    completionTokens,
    totalTokens,
    spend: cost,
    startTime: record.startedAtEpoch,
    endTime,
    status,
    stream: record.stream,
    callType: record.callType,
    reason: record.reason,
    ...(amounts.breakdown === undefined ? {} : { usageDetails: amounts.breakdown }),
    ...(record.cacheKey === undefined ? {} : { cacheKey: record.cacheKey }),
  });
}
