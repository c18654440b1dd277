/**
 * The tracer as a pipeline observer: turns a finished call (its `CallContext` and `CallResult`) into a
 * `CallTrace` and queues it, and names the trace in the response's `x-trace-id` header. The trace id is the
 * request id's 32 hex digits, so `x-request-id`, logs and the trace viewer agree.
 *
 * Session: the client's conversation id from the `x-session-id` header (the chat sends LibreChat's
 * conversation id there), or `metadata.session_id` in the body (LiteLLM's Langfuse convention). Tags: the
 * model alias, `cache_hit` for a call answered from the response cache, plus the request's `metadata.tags` strings.
 */

import type { CaptureContent } from "../config/trace-settings.js";
import type { CallContext, CallObserver, CallResult, CallType } from "../pipeline/types.js";
import { type CallTrace, traceIdFor } from "./call-trace.js";
import type { CallTracer } from "./langfuse-tracer.js";
import { usageDetailsOf } from "./usage-details.js";

/** Request fields recorded as the generation's model parameters (OpenAI chat completion request names). */
const MODEL_PARAMETERS = [
  "temperature",
  "top_p",
  "max_tokens",
  "max_completion_tokens",
  "presence_penalty",
  "frequency_penalty",
  "seed",
  "n",
  "stream",
  "tool_choice",
  "reasoning_effort",
] as const;

/**
 * Each endpoint's trace name (the endpoint as OpenAI's and Anthropic's API references name it) and its
 * generation's operation (OpenTelemetry's `gen_ai.operation.name`), by the call's `call_type`.
 */
export const TRACE_NAMES: Readonly<Record<CallType, { name: string; operation: string }>> = {
  acompletion: { name: "chat.completions", operation: "chat" },
  aresponses: { name: "responses", operation: "chat" },
  aembedding: { name: "embeddings", operation: "embeddings" },
  atext_completion: { name: "completions", operation: "text_completion" },
  anthropic_messages: { name: "anthropic.messages", operation: "chat" },
  count_tokens: { name: "anthropic.messages.count_tokens", operation: "count_tokens" },
};

const MAX_TAGS = 20;
const MAX_TAG_CHARS = 64;

/** Creates the observer; with `capture` "none" the answer's content is not collected. */
export function tracingObserver(tracer: CallTracer, capture: CaptureContent): CallObserver {
  return {
    wantsOutput: capture !== "none",
    responseHeaders: (call) => ({ "x-trace-id": traceIdFor(call.requestId) }),
    onCallFinished(call, result) {
      tracer.record(callTrace(call, result));
    },
  };
}

/** The trace facts of a finished call. */
export function callTrace(call: CallContext, result: CallResult): CallTrace {
  const body = call.body as Record<string, unknown> & { metadata?: Record<string, unknown> };
  const modelParameters: CallTrace["modelParameters"] = {};
  for (const name of MODEL_PARAMETERS) {
    const value = body[name];
    if (typeof value === "number" || typeof value === "boolean") modelParameters[name] = value;
    else if (typeof value === "string") modelParameters[name] = value;
  }
  const tags = [call.model ?? "unknown"];
  // A call answered from the response cache (response-cache/): no upstream, $0.
  if (call.cache?.hit === true) tags.push("cache_hit");
  const requested = body.metadata?.tags;
  if (Array.isArray(requested)) {
    for (const tag of requested) {
      if (typeof tag === "string" && tags.length < MAX_TAGS) tags.push(tag.slice(0, MAX_TAG_CHARS));
    }
  }
  const auth = call.auth;
  const deployment = result.deployment;
  const usage = result.usage;
  return {
    ...TRACE_NAMES[call.callType],
    traceId: traceIdFor(call.requestId),
    requestId: call.requestId,
    startTime: call.startedAtEpoch,
    endTime: call.startedAtEpoch + result.durationMs,
    ...(auth.kind === "virtual" && auth.userId ? { userId: auth.userId } : {}),
    ...(auth.kind === "virtual" && auth.keyAlias ? { keyAlias: auth.keyAlias } : {}),
    ...sessionOf(call),
    tags,
    requestedModel: call.model ?? "unknown",
    ...(deployment
      ? { model: `${deployment.provider}/${deployment.upstreamModel}`, deploymentId: deployment.id }
      : {}),
    modelParameters,
    stream: call.stream,
    input: { original: call.clientInput, sent: call.inputOf(call.body) },
    ...(call.output === undefined && call.upstreamOutput === undefined
      ? {}
      : { output: { upstream: call.upstreamOutput ?? call.output, returned: call.output } }),
    ...(usage ? { usage: usageDetailsOf(usage, deployment?.provider) } : {}),
    ...(deployment ? { costUsd: result.cost } : {}),
    ...(call.firstByteAtEpoch === undefined ? {} : { completionStartTime: call.firstByteAtEpoch }),
    status: result.status,
    ...(result.errorType === undefined
      ? {}
      : { errorType: result.errorType, errorMessage: result.errorType }),
    guardrails: call.decisions,
    cacheHit: call.cache?.hit === true,
  };
}

function sessionOf(call: CallContext): { sessionId?: string } {
  const fromHeader = call.sessionId;
  const fromBody = (call.body as { metadata?: { session_id?: unknown } }).metadata?.session_id;
  const id = fromHeader ?? (typeof fromBody === "string" ? fromBody : undefined);
  return id ? { sessionId: id.slice(0, 200) } : {};
}
