/**
 * What every relayed stream answer shares, chat's (`answer-stream.ts`) and a native API's (`answer-native.ts`):
 * checking that the upstream answered with server-sent events, opening the client's response with its headers,
 * the stream's maximum duration, its first byte (time to first token), the client-idle bound, and the status a
 * finished stream is recorded with.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { GatewayError } from "../../errors/gateway-error.js";
import { recordTimeToFirstToken } from "../../metrics/record-call.js";
import type { UpstreamResponse } from "../../router/router.js";
import { CLIENT_IDLE_TIMEOUT_TYPE } from "../../streaming/client-flow.js";
import { isStreamTimeout, StreamTimeoutError } from "../../streaming/stream-end.js";
import { observerHeaders } from "../observers.js";
import { type CallContext, DEFAULT_MAX_STREAM_DURATION_MS, type PipelineDeps } from "../types.js";
import { CLIENT_CLOSED_REQUEST, CLIENT_CLOSED_TYPE, requestedModelLabel } from "./account.js";
import { cacheKeyHeader } from "./cache-lookup.js";
import { decisionHeaders } from "./decision-headers.js";

/** 502 for a streamed answer that is not server-sent events of `events` (nothing was sent yet). */
export const notSse = (what: string, events = "chat completion chunks") =>
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
