/**
 * Answer step for a stream of chat completion chunks (chat completions, and the endpoints that translate to
 * them): relayed event by event (`streaming/relay-sse.ts`) through the stream output guard, within the call's
 * reservation and the stream's time bounds (`relayed-stream.ts`), settled and counted when it ends.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { UpstreamResponse } from "../../router/router.js";
import { OutputMeter, tokenizerFor } from "../../streaming/output-meter.js";
import { relaySse, type StreamEncoder } from "../../streaming/relay-sse.js";
import { StreamText } from "../../streaming/stream-text.js";
import type { CallContext, PipelineDeps } from "../types.js";
import { finish, settle } from "./account.js";
import { withTopUp } from "./admit.js";
import { type StreamCacheFormat, storeStreamed, streamCapture } from "./cache-store.js";
import {
  clientIdleOf,
  ensureEventStream,
  firstByte,
  notSse,
  openStream,
  streamDeadline,
  streamEnding,
} from "./relayed-stream.js";

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
