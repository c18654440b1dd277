/**
 * Answer step for answers in OpenAI's formats: a JSON answer is read whole, passed through the output guard,
 * settled (its cost goes in `x-litellm-response-cost`) and sent ({@link answerJson}, any endpoint, told how to
 * read its answer by a {@link JsonAnswerFormat}); a stream of chat completion chunks is relayed event by event
 * through the stream output guard and settled when it ends ({@link answerStream}).
 *
 * Guard decisions go on the response: `x-litellm-applied-guardrails` (the guardrails that ran, comma-separated,
 * as LiteLLM names the header) and `x-guardrail-decisions`, e.g.
 * `pii=mask:EMAIL_ADDRESS,PHONE_NUMBER; prompt_injection=allow:0.03` (`block(monitor)`: a monitor-mode
 * guardrail's verdict, recorded and not acted upon). A stream's headers are sent before its
 * output is checked, so they carry the input decisions only; the observers get all of them.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { formatCost } from "../../accounting/call-accounting.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { GuardDecision, TextExtractor } from "../../guardrails/types.js";
import { recordTimeToFirstToken } from "../../metrics/record-call.js";
import type { UpstreamResponse } from "../../router/router.js";
import { assembleJson } from "../../streaming/assemble-json.js";
import { CLIENT_IDLE_TIMEOUT_TYPE } from "../../streaming/client-flow.js";
import { OutputMeter, tokenizerFor } from "../../streaming/output-meter.js";
import { relaySse, type StreamEncoder } from "../../streaming/relay-sse.js";
import { classifyStreamFailure, isStreamTimeout, StreamTimeoutError } from "../../streaming/stream-end.js";
import { StreamText } from "../../streaming/stream-text.js";
import type { Usage } from "../../usage/types.js";
import { observerHeaders } from "../observers.js";
import { type CallContext, DEFAULT_MAX_STREAM_DURATION_MS, type PipelineDeps } from "../types.js";
import {
  book,
  CLIENT_CLOSED_REQUEST,
  CLIENT_CLOSED_TYPE,
  finish,
  measure,
  requestedModelLabel,
  settle,
} from "./account.js";
import { withTopUp } from "./admit.js";
import { cacheKeyHeader } from "./cache-lookup.js";
import { type StreamCacheFormat, storeAnswer, storeStreamed, streamCapture } from "./cache-store.js";

/** Keeps a name or entity header-safe (they come from configuration, never from the client). */
const token = (value: string) => value.replace(/[^\w.-]/g, "_");

/** One decision as `name=action[(monitor)][:ENTITY,…][:score]` (`(monitor)`: recorded, not acted upon). */
function formatDecision(decision: GuardDecision): string {
  const mode = decision.mode === "monitor" ? "(monitor)" : "";
  let out = `${token(decision.guardrail)}=${decision.action}${mode}`;
  if (decision.entities !== undefined && decision.entities.length > 0) {
    out += `:${decision.entities.map(token).join(",")}`;
  }
  if (decision.score !== undefined) out += `:${Number(decision.score.toFixed(4))}`;
  return out;
}

/** The guardrail headers for `decisions`; empty when there are none. */
export function decisionHeaders(decisions: readonly GuardDecision[]): Record<string, string> {
  if (decisions.length === 0) return {};
  const names = [...new Set(decisions.map((d) => token(d.guardrail)))];
  return {
    "x-litellm-applied-guardrails": names.join(","),
    "x-guardrail-decisions": decisions.map(formatDecision).join("; "),
  };
}

/** How {@link answerJson} reads one endpoint's JSON answer. */
export interface JsonAnswerFormat {
  /**
   * The answer's usage in chat completions' names (tokens) with its breakdown (read by
   * `usage/provider-usage.ts`), undefined when it has none.
   */
  usage(answer: unknown): Usage | undefined;
  /** What tracing records as the output (a copy: the answer may still be rewritten), e.g. chat's first message. */
  output(answer: unknown): unknown;
  /** The model-written texts the output guard reads; undefined when the endpoint's answer has none (embeddings). */
  outputTexts?: TextExtractor;
  /**
   * Rewrites the upstream's parsed answer into the client's format before anything else reads it (a translating
   * endpoint: a chat completion into a Responses `response`); `usage`, `output` and `outputTexts` then read the
   * rewritten answer. Default: the upstream's answer and bytes go to the client as they are.
   */
  translate?(answer: unknown): unknown;
  /**
   * Told the answer the client is about to get (after the output guard passed it), just before it is sent; not
   * called for an answer the guard blocked. E.g. the Responses endpoint records the response's owner here.
   */
  answered?(answer: unknown): void;
  /**
   * The answer is whole and may be stored by the response cache (`steps/cache-store.ts`): not cut by a cap, not a
   * refusal. Absent: the endpoint's answers are never stored.
   */
  cacheable?(answer: Record<string, unknown>): boolean;
}

/** 502 for an upstream body that is not JSON. */
const notJson = () =>
  new GatewayError(502, "The upstream answered with a body that is not valid JSON.", {
    type: "upstream_error",
  });

/**
 * Answers a non-streamed call with the upstream's JSON, read as `format` says; a call sent as a stream because its
 * deployment ignores output caps is cut where its reservation (and its top-ups, as a relayed stream takes them) ends and assembled into that JSON first ({@link readAssembled}).
 * @throws GatewayError 502 when the upstream body is not JSON; whatever the output guard throws to block.
 */
export async function answerJson(
  call: CallContext,
  upstream: UpstreamResponse,
  deps: PipelineDeps,
  reply: FastifyReply,
  format: JsonAnswerFormat,
): Promise<FastifyReply> {
  let text: string;
  let completion: unknown;
  const assembled = upstream.assembled ? await readAssembled(call, upstream, deps) : undefined;
  if (assembled !== undefined) {
    call.firstByteAtEpoch = deps.clock.now();
    completion = assembled;
    text = JSON.stringify(assembled);
  } else {
    try {
      text = await upstream.body.text();
      call.firstByteAtEpoch = deps.clock.now();
      completion = JSON.parse(text);
    } catch (error) {
      if (call.abort.aborted) throw error;
      throw notJson();
    }
  }
  if (format.translate !== undefined) {
    completion = format.translate(completion);
    text = JSON.stringify(completion);
  }
  const guard = format.outputTexts === undefined ? undefined : deps.guard;
  // The answer before an output guard may rewrite it (tracing with TRACE_CAPTURE_CONTENT=full).
  if (deps.collectOutput && guard !== undefined) call.upstreamOutput = format.output(completion);
  let rewritten = false;
  if (guard !== undefined && format.outputTexts !== undefined) {
    try {
      const outcome = await guard.checkOutput(call, completion, format.outputTexts);
      call.decisions.push(...outcome.decisions);
      rewritten = outcome.rewritten === true;
    } catch (error) {
      // The upstream was used: the call is paid for even though the client gets the guard's refusal.
      const [status, reason] =
        error instanceof GatewayError ? [error.status, error.reason] : [500, "internal_error"];
      settle(call, deps, format.usage(completion), 0, status, reason);
      throw error;
    }
    // Serialised again only when the guard changed the answer; otherwise the upstream's own bytes are sent.
    if (rewritten) text = JSON.stringify(completion);
  }
  if (deps.collectOutput) {
    call.output = format.output(completion);
    if (!rewritten) call.upstreamOutput = undefined;
  }
  format.answered?.(completion);
  // The cost goes in a header; the booking (settle, metrics, spend row) waits until the answer is sent.
  const measured = measure(call, deps, format.usage(completion), 0);
  const sent = reply
    .header("content-type", "application/json")
    .header("x-litellm-response-cost", formatCost(measured.amounts.cost))
    .header("x-litellm-model-id", upstream.deployment.id)
    .headers(decisionHeaders(call.decisions))
    .headers(cacheKeyHeader(call))
    .send(text);
  book(call, deps, measured, 200);
  if (call.cache?.store === true && format.cacheable?.(completion as Record<string, unknown>) === true)
    storeAnswer(call, deps, completion as Record<string, unknown>, measured.amounts.cost);
  return sent;
}

/**
 * The assembled JSON answer of `upstream`, or undefined when the upstream answered with JSON after all (a server
 * that ignores `stream` too): the caller reads that body as JSON. The upstream's body is closed when this returns
 * (a cut stream's request is aborted, so the upstream stops generating).
 * @throws GatewayError 502/504 when the stream failed or timed out before it finished (what was read is booked
 *   first); the abort reason when the client left.
 */
export async function readAssembled(
  call: CallContext,
  upstream: UpstreamResponse,
  deps: PipelineDeps,
): Promise<Record<string, unknown> | undefined> {
  const contentType = String(upstream.headers["content-type"] ?? "");
  if (!/^\s*text\/event-stream\s*(;|$)/i.test(contentType)) return undefined;
  const meter = new OutputMeter(call.outputLimit, tokenizerFor(upstream.deployment.upstreamModel));
  const deadline = streamDeadline(upstream, deps);
  try {
    const { topUp } = withTopUp(call);
    const { answer } = await assembleJson(
      upstream.body,
      meter,
      call.promptEstimate,
      call.outputRequest.choices,
      topUp,
    );
    return answer;
  } catch (error) {
    if (call.abort.aborted) throw error;
    let failure = error;
    if (!(error instanceof GatewayError)) {
      const { status, message, type } = classifyStreamFailure(
        error,
        deps.router.streamTimeoutOf(upstream.deployment),
      );
      failure = new GatewayError(status, message, { type });
    }
    // The upstream was used: what it sent is paid for even though the client gets the error.
    settle(
      call,
      deps,
      undefined,
      meter.tokens,
      (failure as GatewayError).status,
      (failure as GatewayError).reason,
    );
    throw failure;
  } finally {
    clearTimeout(deadline);
    if (!upstream.body.destroyed) upstream.body.on("error", () => {}).destroy();
  }
}

/** 502 for a streamed answer that is not server-sent events of `events` (nothing was sent yet). */
const notSse = (what: string, events = "chat completion chunks") =>
  new GatewayError(
    502,
    `The upstream answered the stream with ${what}, not server-sent events of ${events}.`,
    {
      type: "upstream_error",
    },
  );

/**
 * Checks that a streamed answer is `text/event-stream` before anything is sent; otherwise drops its body.
 * @param events what the events should be, for the message (e.g. "chat completion chunks").
 * @throws GatewayError 502 `upstream_error` naming the content type the upstream sent.
 */
export function ensureEventStream(upstream: UpstreamResponse, events?: string): void {
  const contentType = String(upstream.headers["content-type"] ?? "");
  if (/^\s*text\/event-stream\s*(;|$)/i.test(contentType)) return;
  upstream.body.on("error", () => {}).destroy(); // undici reports its own abort as an error
  throw notSse(
    contentType === "" ? "a body without a content type" : `a body of type ${contentType.split(";")[0]}`,
    events,
  );
}

/** How {@link answerStream} treats one call's stream. */
export interface StreamAnswerOptions {
  /** Remove usage from what the client sees: the gateway asked for it, the client did not. */
  stripUsage: boolean;
  /** Writes the chunks in the client's protocol (a translating endpoint); default: chat's SSE. */
  encoder?: StreamEncoder;
  /** The response's `content-type` (default `text/event-stream; charset=utf-8`). */
  contentType?: string;
  /** The response cache's reading of the stream (`steps/cache-store.ts`); absent: never stored. */
  cacheable?: StreamCacheFormat["cacheable"];
  storedAs?: StreamCacheFormat["storedAs"];
}

/**
 * Relays a streamed call of chat completion chunks, settles and counts it once it ended (the reply is hijacked once the first event is
 * there: no onResponse). The stream is bounded: output past the call's reservation is not relayed (the stream
 * ends with `finish_reason: "length"`), and it is ended with an error event after the deployment's stream
 * timeout without a chunk or after `deps.maxStreamDurationMs`; a client that reads nothing for
 * `deps.streamClientIdleTimeoutMs` has its connection closed and the upstream aborted. What was relayed is booked: the upstream's
 * usage, else the output tokens counted on the way ({@link OutputMeter}).
 * @throws GatewayError 502 when the upstream's answer is not `text/event-stream`, its first event is not a JSON
 *   chunk or it failed before its first event (no header was sent; the call is booked at zero).
 */
export async function answerStream(
  call: CallContext,
  upstream: UpstreamResponse,
  deps: PipelineDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  options: StreamAnswerOptions,
): Promise<void> {
  ensureEventStream(upstream);
  const res = reply.raw;
  const open = () => openStream(call, upstream, deps, request, reply, options.contentType);
  const outputGuard = deps.guard?.streamOutput(call);
  const text = deps.collectOutput ? new StreamText() : undefined;
  const deadline = streamDeadline(upstream, deps);
  const capture = streamCapture(call, deps, options);
  const outcome = await relaySse(upstream.body, res, {
    open,
    stripUsage: options.stripUsage,
    ...(options.encoder === undefined ? {} : { encoder: options.encoder }),
    meter: new OutputMeter(call.outputLimit, tokenizerFor(upstream.deployment.upstreamModel)),
    ...withTopUp(call),
    promptTokens: call.promptEstimate,
    idleTimeoutMs: deps.router.streamTimeoutOf(upstream.deployment),
    ...clientIdleOf(deps),
    ...(outputGuard === undefined ? {} : { guard: outputGuard }),
    ...(text === undefined ? {} : { onText: (piece: string) => text.addText(piece) }),
    ...(capture === undefined ? {} : { onPayload: capture.onPayload }),
    onFirstChunk: () => firstByte(call, upstream, deps),
  }).finally(() => clearTimeout(deadline));
  if (!upstream.body.destroyed) upstream.body.destroy();
  if (outcome.unsent) {
    if (outcome.upstreamError !== undefined && !call.abort.aborted)
      throw notSse("a body that failed before its first event");
    if (outcome.upstreamError !== undefined) throw outcome.upstreamError;
    throw notSse("a body whose first event is not a JSON chunk");
  }
  if (text !== undefined) call.output = text.value();
  call.decisions.push(...outcome.guardDecisions);
  const left = res.destroyed && !outcome.completed;
  const ended = streamEnding(outcome.upstreamError, outcome.blocked, left, outcome.clientIdle);
  // A stream cut at its reservation never read the upstream's usage; one without usage is booked by its count.
  const cost = settle(
    call,
    deps,
    outcome.cut ? undefined : outcome.usage,
    outcome.outputTokens,
    ended.status,
    ended.reason,
  );
  finish(deps, request, ended.status, ended.errorType);
  if (capture !== undefined && ended.status === 200 && !outcome.cut && outcome.completed)
    await storeStreamed(call, deps, capture, cost, options);
}

/**
 * Hijacks the reply and sends a stream's headers (`content-type` default `text/event-stream; charset=utf-8`),
 * with the guardrail decisions so far and the observers' headers; the pipeline's counting is the stream's.
 */
export function openStream(
  call: CallContext,
  upstream: UpstreamResponse,
  deps: PipelineDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  contentType = "text/event-stream; charset=utf-8",
): void {
  reply.hijack();
  request.countedByHandler = true;
  reply.raw.writeHead(200, {
    "content-type": contentType,
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    "x-request-id": request.id,
    "x-litellm-model-id": upstream.deployment.id,
    ...decisionHeaders(call.decisions),
    ...cacheKeyHeader(call),
    ...observerHeaders(deps.observers, call),
  });
}

/**
 * Ends `upstream`'s body with a {@link StreamTimeoutError} after `deps.maxStreamDurationMs`; the timer (clear it
 * when the stream ends), or undefined without a maximum.
 */
export function streamDeadline(upstream: UpstreamResponse, deps: PipelineDeps): NodeJS.Timeout | undefined {
  const maxMs = deps.maxStreamDurationMs ?? DEFAULT_MAX_STREAM_DURATION_MS;
  const timeUp = () =>
    upstream.body.destroy(
      new StreamTimeoutError(
        `The stream ran past the maximum stream duration (${maxMs / 1000} s); it was ended.`,
      ),
    );
  return maxMs > 0 ? setTimeout(timeUp, maxMs) : undefined;
}

/** A stream's first event reached the client: the call's time to first token (`firstByteAtEpoch`, the metric). */
export function firstByte(call: CallContext, upstream: UpstreamResponse, deps: PipelineDeps): void {
  call.firstByteAtEpoch = deps.clock.now();
  recordTimeToFirstToken(
    deps.metrics,
    requestedModelLabel(call),
    upstream.deployment,
    (performance.now() - call.startedAt) / 1000,
  );
}

/** The relay's `clientIdleTimeoutMs` option from `deps.streamClientIdleTimeoutMs`, when it is set. */
export function clientIdleOf(deps: PipelineDeps): { clientIdleTimeoutMs?: number } {
  const ms = deps.streamClientIdleTimeoutMs;
  return ms === undefined ? {} : { clientIdleTimeoutMs: ms };
}

/**
 * The status and error type a finished stream is recorded with: 499 `client_idle_timeout` when the client read
 * nothing for `stream_client_idle_timeout` (`clientIdle`), 504 `timeout` / 502 `upstream_error` for an upstream
 * failure, the guard's refusal for a block, 499 `client_closed_request` when the client left first, else 200;
 * `reason`: the spend row's (the error type, or the guard's `guardrail_violation`).
 */
export function streamEnding(
  upstreamError: Error | undefined,
  blocked: GatewayError | undefined,
  clientLeft: boolean,
  clientIdle = false,
): { status: number; errorType?: string; reason?: string } {
  const failed = (status: number, errorType: string, reason = errorType) => ({ status, errorType, reason });
  if (clientIdle) return failed(CLIENT_CLOSED_REQUEST, CLIENT_IDLE_TIMEOUT_TYPE);
  if (upstreamError !== undefined)
    return isStreamTimeout(upstreamError) ? failed(504, "timeout") : failed(502, "upstream_error");
  if (blocked !== undefined) return failed(blocked.status, blocked.type, blocked.reason);
  if (clientLeft) return failed(CLIENT_CLOSED_REQUEST, CLIENT_CLOSED_TYPE);
  return { status: 200 };
}
