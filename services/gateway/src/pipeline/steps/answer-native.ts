/**
 * Answer step for a stream in the upstream's own events (an endpoint passing its API through natively:
 * Responses to OpenAI, Messages to Anthropic): the events are relayed by `streaming/native-relay.ts`, read by
 * the endpoint's {@link NativeEventReader}, with the chat stream's bounds (the reservation, the deployment's
 * `stream_timeout` between events, `deps.maxStreamDurationMs`, `deps.streamClientIdleTimeoutMs`) and the stream output guard when the policy has
 * one; the call is settled and counted when the stream ends.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { UpstreamResponse } from "../../router/router.js";
import { type NativeEventReader, relayNative } from "../../streaming/native-relay.js";
import { OutputMeter, tokenizerFor } from "../../streaming/output-meter.js";
import { StreamText } from "../../streaming/stream-text.js";
import type { CallContext, PipelineDeps } from "../types.js";
import { finish, settle } from "./account.js";
import { withTopUp } from "./admit.js";
import { storeAnswer } from "./cache-store.js";
import {
  clientIdleOf,
  ensureEventStream,
  firstByte,
  openStream,
  streamDeadline,
  streamEnding,
} from "./relayed-stream.js";

/**
 * How the response cache stores a native stream: the whole answer the stream carried (e.g. the `response` of
 * Responses' `response.completed`), and whether it may be stored. Only a stream that ended 200, was not cut, and
 * ran without an output guard is stored (with a guard the events the reader saw are not what the client got).
 */
export interface NativeStreamCache {
  answer(): Record<string, unknown> | undefined;
  cacheable(answer: Record<string, unknown>): boolean;
}

/**
 * Relays `upstream`'s event stream read by `reader` (see the module comment); settles and counts the call, then
 * stores its answer when `cache` says how (`steps/cache-store.ts`).
 * @throws GatewayError 502 when the upstream's answer is not `text/event-stream` (nothing was sent yet).
 */
export async function answerNativeStream(
  call: CallContext,
  upstream: UpstreamResponse,
  deps: PipelineDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  reader: NativeEventReader,
  cache?: NativeStreamCache,
): Promise<void> {
  ensureEventStream(upstream, "its API's events");
  openStream(call, upstream, deps, request, reply);
  const res = reply.raw;
  const { deployment } = upstream;
  const deadline = streamDeadline(upstream, deps);
  const outputGuard = deps.guard?.streamOutput(call);
  const text = deps.collectOutput ? new StreamText() : undefined;
  const outcome = await relayNative(upstream.body, res, {
    reader,
    meter: new OutputMeter(call.outputLimit, tokenizerFor(deployment.upstreamModel)),
    ...withTopUp(call),
    promptTokens: call.promptEstimate,
    idleTimeoutMs: deps.router.streamTimeoutOf(deployment),
    ...clientIdleOf(deps),
    ...(outputGuard === undefined ? {} : { guard: outputGuard }),
    ...(text === undefined ? {} : { onContent: (piece: string) => text.addText(piece) }),
    onFirstEvent: () => firstByte(call, upstream, deps),
  }).finally(() => clearTimeout(deadline));
  if (!upstream.body.destroyed) upstream.body.destroy();
  if (text !== undefined) call.output = text.value();
  call.decisions.push(...outcome.guardDecisions);
  const left = res.destroyed && !outcome.completed && !reader.completed;
  const ended = streamEnding(outcome.upstreamError, outcome.blocked, left, outcome.clientIdle);
  const cost = settle(call, deps, outcome.usage, outcome.outputTokens, ended.status, ended.reason);
  finish(deps, request, ended.status, ended.errorType);
  if (cache === undefined || outputGuard !== undefined || ended.status !== 200 || outcome.cut) return;
  const answer = cache.answer();
  if (answer !== undefined && cache.cacheable(answer)) storeAnswer(call, deps, answer, cost);
}
