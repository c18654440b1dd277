/**
 * Account step: after the answer, settle the reservation with the real usage, record the spend row and the
 * token/latency metrics ({@link recordCall}), count the request, and hand the finished call to the observers.
 * A call that got no upstream answer (refused by a budget, a rate limit, a guardrail or the key's models; no
 * upstream answered; the client left first) gets a spend row of its own too: spend 0 and its reason
 * ({@link logRefusal}).
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import {
  type CallAmounts,
  callerColumns,
  callerLabels,
  measureCall,
  recordCall,
} from "../../accounting/call-accounting.js";
import { recordRequest } from "../../metrics/record-call.js";
import type { Usage } from "../../usage/types.js";
import type { CallContext, CallResult, PipelineDeps } from "../types.js";

/** Status recorded for a client that left before its answer was complete (nginx's "client closed request"). */
export const CLIENT_CLOSED_REQUEST = 499;
/** The `exception_class` recorded with {@link CLIENT_CLOSED_REQUEST}. */
export const CLIENT_CLOSED_TYPE = "client_closed_request";

/**
 * The client went away before its answer was complete (a non-streamed call, or before the stream started):
 * records 499 and gives up the reply (there is nobody to send an error to).
 */
export function clientLeft(deps: PipelineDeps, request: FastifyRequest, reply: FastifyReply): void {
  request.countedByHandler = true;
  finish(deps, request, CLIENT_CLOSED_REQUEST, CLIENT_CLOSED_TYPE);
  reply.hijack();
  if (!reply.raw.destroyed) reply.raw.destroy();
}

/** A measured call: its amounts and the upstream's share of its time (ms), taken when the answer was ready. */
export interface MeasuredCall {
  amounts: CallAmounts;
  upstreamMs: number;
}

/**
 * Measures an answered call: the usage the upstream reported (or the prompt estimate and
 * `fallbackCompletionTokens` when it reported none). Sets `call.cost` (USD) and `call.usage`; books nothing
 * (see {@link book}).
 */
export function measure(
  call: CallContext,
  deps: PipelineDeps,
  usage: Usage | undefined,
  fallbackCompletionTokens: number,
): MeasuredCall {
  const upstream = call.upstream!;
  const amounts = measureCall(
    {
      deployment: upstream.deployment,
      estimatedPromptTokens: call.promptEstimate,
      startedAt: call.startedAt,
    },
    usage,
    fallbackCompletionTokens,
    () => deps.clock.now(),
  );
  call.cost = amounts.cost;
  call.usage = usage ?? {
    prompt_tokens: amounts.promptTokens,
    completion_tokens: amounts.completionTokens,
    total_tokens: amounts.totalTokens,
  };
  return { amounts, upstreamMs: performance.now() - (upstream.sentAt - upstream.retryMs) };
}

/**
 * Books a measured call: settles the reservation, records the spend row and the token/latency metrics
 * ({@link recordCall}), and gives the deployment's tpm count (routing) the real figure instead of the estimate
 * it was sent with.
 */
export function book(
  call: CallContext,
  deps: PipelineDeps,
  measured: MeasuredCall,
  status: number,
  reason?: string,
): void {
  const upstream = call.upstream!;
  recordCall(
    {
      requestId: call.requestId,
      auth: call.auth,
      labels: call.labels,
      requestedModel: requestedModelLabel(call),
      deployment: upstream.deployment,
      admission: call.admission,
      stream: call.stream,
      callType: call.callType,
      startedAtEpoch: call.startedAtEpoch,
      startedAt: call.startedAt,
      upstreamMs: measured.upstreamMs,
      estimatedPromptTokens: call.promptEstimate,
      upstreamHeaders: upstream.headers,
      reason,
      ...(call.cache === undefined ? {} : { cacheKey: call.cache.key }),
    },
    measured.amounts,
    status,
    deps.metrics,
    deps.spend,
  );
  deps.router.recordUsage(upstream, measured.amounts.totalTokens);
  noteOverrun(call, deps, measured.amounts.completionTokens);
}

/**
 * An answer with more output than the cap its deployment was sent (the request's own, else the one the gateway
 * added; `cost/reservation.ts`) is booked at its true cost like any other, but it spent past its reservation: it
 * is logged (no content, no key) and counted in `gateway_output_cap_overruns_total`, which the
 * `GatewayDeploymentIgnoresOutputCap` alert reads, and the deployment is marked, on every instance, as one that
 * ignores caps: its next JSON calls go upstream as streams cut at their reservation (`router/cap-ignorers.ts`).
 */
function noteOverrun(call: CallContext, deps: PipelineDeps, completionTokens: number): void {
  const perChoice = call.outputRequest.cap ?? call.reservation?.cap?.tokens;
  if (perChoice === undefined || perChoice === 0) return;
  const cap = perChoice * call.outputRequest.choices;
  if (!(completionTokens > cap)) return;
  const { deployment } = call.upstream!;
  deps.metrics.outputCapOverruns.inc({
    litellm_model_name: deployment.upstreamModel,
    model_id: deployment.id,
    api_provider: deployment.provider,
  });
  deps.log.warn(
    { requestId: call.requestId, modelId: deployment.id, cap, completionTokens },
    "the deployment answered past the output cap it was sent; booked at its true cost",
  );
  void deps.router.capIgnorers.mark(deployment);
}

/**
 * {@link measure} then {@link book}; returns the cost in USD. `reason`: why a call the upstream answered still
 * failed (`upstream_error`, `timeout`, `guardrail_violation`, …), for its spend row.
 */
export function settle(
  call: CallContext,
  deps: PipelineDeps,
  usage: Usage | undefined,
  fallbackCompletionTokens: number,
  status: number,
  reason?: string,
): number {
  const measured = measure(call, deps, usage, fallbackCompletionTokens);
  book(call, deps, measured, status, reason);
  return measured.amounts.cost;
}

/**
 * A model request is over (answered, refused or abandoned): count it in the request and failure counters and,
 * when it got past parsing, hand it to every observer on a later tick (off the response path).
 */
export function finish(
  deps: PipelineDeps,
  request: FastifyRequest,
  status: number,
  errorType?: string,
): void {
  countRequest(deps, request, status, errorType);
  const call = request.call;
  if (call === undefined) return;
  if (status >= 400) logRefusal(call, deps, status, request.errorReason ?? errorType ?? "error");
  if (deps.observers.length === 0) return;
  const result: CallResult = {
    status,
    cost: call.cost,
    durationMs: performance.now() - call.startedAt,
    ...(errorType === undefined ? {} : { errorType }),
    ...(call.usage === undefined ? {} : { usage: call.usage }),
    ...(call.upstream === undefined ? {} : { deployment: call.upstream.deployment }),
  };
  setImmediate(() => {
    for (const observer of deps.observers) {
      try {
        observer.onCallFinished(call, result);
      } catch (error) {
        deps.log.warn({ err: error, requestId: call.requestId }, "call observer failed");
      }
    }
  });
}

/** The longest requested model name a refused call's spend row keeps (characters). */
const MAX_MODEL_GROUP_CHARS = 256;

/**
 * Queues the spend row of a parsed call that failed without an upstream answer being booked (a booked call, one
 * with `usage`, already has its row): spend 0, no tokens, no deployment, its HTTP `status` and `reason` (the
 * OpenAI error type, or `GatewayError.reason`). Free calls (`count_tokens`) get no row, as when they succeed.
 * Goes through the same batched spend writer as answered calls; nothing is added to any spend total.
 */
function logRefusal(call: CallContext, deps: PipelineDeps, status: number, reason: string): void {
  if (call.usage !== undefined || call.free || deps.spend === undefined) return;
  deps.spend.record({
    ...unbilledRow(call, deps, status),
    // The alias once resolved; else the name the client asked for (an unknown model), clipped.
    modelGroup: call.model ?? String(call.body.model).slice(0, MAX_MODEL_GROUP_CHARS),
    model: "",
    deploymentId: null,
    promptTokens: 0,
    completionTokens: 0,
    totalTokens: 0,
    reason,
  });
}

/**
 * The columns every spend row of a call the gateway answered without booking an upstream's bill shares (a refusal,
 * a cache hit): the request id, the caller (`callerColumns`), spend 0, the call's times (epoch ms), `status`,
 * `stream` and `call_type`. The caller adds the model and token columns.
 */
export function unbilledRow(call: CallContext, deps: PipelineDeps, status: number) {
  return {
    requestId: call.requestId,
    ...callerColumns(call.auth),
    spend: 0,
    startTime: call.startedAtEpoch,
    endTime: deps.clock.now(),
    status,
    stream: call.stream,
    callType: call.callType,
  };
}

/**
 * The `requested_model` label: the alias once resolved, `unknown` for a name that is not registered, empty
 * before the body was parsed. Never the client's string as such (each made-up name would be a new series).
 */
export function requestedModelLabel(call: CallContext | undefined): string {
  if (call === undefined) return "";
  return call.model ?? UNKNOWN_MODEL_LABEL;
}

/** Label value for a model name that is not registered. */
export const UNKNOWN_MODEL_LABEL = "unknown";

const NO_CALLER = { hashed_api_key: "", api_key_alias: "", user: "", team: "", team_alias: "" };

/** Counts a finished model request in the request and failure counters. */
function countRequest(deps: PipelineDeps, request: FastifyRequest, status: number, errorType?: string): void {
  const caller = request.call?.labels ?? (request.auth ? callerLabels(request.auth) : NO_CALLER);
  const route = request.routeOptions.config.route ?? "";
  recordRequest(deps.metrics, caller, route, requestedModelLabel(request.call), status, errorType);
}
