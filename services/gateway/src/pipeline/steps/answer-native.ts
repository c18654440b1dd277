/**
 * Answer step for a stream in the upstream's own events (an endpoint passing its API through natively:
 * Responses to OpenAI, Messages to Anthropic): the events are relayed by `streaming/native-relay.ts`, read by
 * the endpoint's {@link NativeEventReader}, with the chat stream's bounds (the reservation, the deployment's
 * `stream_timeout` between events, `deps.maxStreamDurationMs`) and the stream output guard when the policy has
 * one; the call is settled and counted when the stream ends.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { GatewayError } from "../../errors/gateway-error.js";
import type { UpstreamResponse } from "../../router/router.js";
import { type NativeEventReader, relayNative } from "../../streaming/native-relay.js";
import { OutputMeter, tokenizerFor } from "../../streaming/output-meter.js";
import { StreamTimeoutError } from "../../streaming/stream-end.js";
import { STREAM_TEXT_MAX_CHARS } from "../../streaming/stream-text.js";
import { observerHeaders } from "../observers.js";
import { type CallContext, DEFAULT_MAX_STREAM_DURATION_MS, type PipelineDeps } from "../types.js";
import { CLIENT_CLOSED_REQUEST, CLIENT_CLOSED_TYPE, finish, requestedModelLabel, settle } from "./account.js";
import { decisionHeaders } from "./answer.js";

/**
 * Relays `upstream`'s event stream read by `reader` (see the module comment); settles and counts the call.
 * @throws GatewayError 502 when the upstream's answer is not `text/event-stream` (nothing was sent yet).
 */
export async function answerNativeStream(
  call: CallContext,
  upstream: UpstreamResponse,
  deps: PipelineDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  reader: NativeEventReader,
): Promise<void> {
  const contentType = String(upstream.headers["content-type"] ?? "");
  if (!/^\s*text\/event-stream\s*(;|$)/i.test(contentType)) {
    upstream.body.on("error", () => {}).destroy(); // undici reports its own abort as an error
    throw new GatewayError(
      502,
      "The upstream answered the stream with a body that is not server-sent events.",
      {
        type: "upstream_error",
      },
    );
  }
  reply.hijack();
  request.countedByHandler = true;
  const res = reply.raw;
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    "x-request-id": request.id,
    "x-litellm-model-id": upstream.deployment.id,
    ...decisionHeaders(call.decisions),
    ...observerHeaders(deps.observers, call),
  });
  const { deployment } = upstream;
  const maxMs = deps.maxStreamDurationMs ?? DEFAULT_MAX_STREAM_DURATION_MS;
  const timeUp = () =>
    upstream.body.destroy(
      new StreamTimeoutError(
        `The stream ran past the maximum stream duration (${maxMs / 1000} s); it was ended.`,
      ),
    );
  const deadline = maxMs > 0 ? setTimeout(timeUp, maxMs) : undefined;
  const outputGuard = deps.guard?.streamOutput(call);
  let text = "";
  const outcome = await relayNative(upstream.body, res, {
    reader,
    meter: new OutputMeter(call.completionEstimate, tokenizerFor(deployment.upstreamModel)),
    promptTokens: call.promptEstimate,
    idleTimeoutMs: deps.router.streamTimeoutOf(deployment),
    ...(outputGuard === undefined ? {} : { guard: outputGuard }),
    ...(deps.collectOutput
      ? { onContent: (piece: string) => (text = (text + piece).slice(0, STREAM_TEXT_MAX_CHARS)) }
      : {}),
    onFirstEvent: () => {
      call.firstByteAtEpoch = deps.clock.now();
      deps.metrics.timeToFirstToken.observe(
        {
          requested_model: requestedModelLabel(call),
          model: `${deployment.provider}/${deployment.upstreamModel}`,
        },
        (performance.now() - call.startedAt) / 1000,
      );
    },
  }).finally(() => clearTimeout(deadline));
  if (!upstream.body.destroyed) upstream.body.destroy();
  if (deps.collectOutput) call.output = text;
  call.decisions.push(...outcome.guardDecisions);
  const status =
    outcome.errorStatus ??
    outcome.blocked?.status ??
    (res.destroyed && !outcome.completed && !reader.completed ? CLIENT_CLOSED_REQUEST : 200);
  settle(call, deps, outcome.usage, outcome.outputTokens, status);
  const errorType =
    outcome.errorStatus === 504
      ? "timeout"
      : outcome.errorStatus !== undefined
        ? "upstream_error"
        : status === CLIENT_CLOSED_REQUEST
          ? CLIENT_CLOSED_TYPE
          : outcome.blocked?.type;
  finish(deps, request, status, errorType);
}
