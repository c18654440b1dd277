/**
 * Relays a native Messages event stream (Anthropic API reference, "Streaming Messages": `event:` / `data:`
 * server-sent events) to the client unchanged, event by event, and books it when it ends. Usage comes from
 * the events themselves: `message_start`'s `message.usage` (input tokens, cache reads and writes) and the
 * cumulative `usage.output_tokens` of `message_delta`; a stream that ends before reporting its output is booked
 * by the text it relayed (`text_delta`, `input_json_delta`, `thinking_delta`, counted by {@link OutputMeter}).
 *
 * Not done here (unlike the chat relay, `streaming/relay-sse.ts`): no cut at the reservation (the request's
 * own `max_tokens` is the reservation, so the upstream stops there itself), no stream output guard (the
 * output guardrails see only non-streamed answers on this path), no maximum stream duration; the idle timeout
 * between events is the router's (the deployment's `stream_timeout`).
 */
import { once } from "node:events";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { FastifyReply, FastifyRequest } from "fastify";
import { anthropicErrorBody } from "../../errors/anthropic-error.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { observerHeaders } from "../../pipeline/observers.js";
import { CLIENT_CLOSED_REQUEST, CLIENT_CLOSED_TYPE, finish, settle } from "../../pipeline/steps/account.js";
import { decisionHeaders } from "../../pipeline/steps/answer.js";
import type { CallContext, PipelineDeps } from "../../pipeline/types.js";
import type { UpstreamResponse } from "../../router/router.js";
import { OutputMeter, tokenizerFor } from "../../streaming/output-meter.js";
import { chatUsage } from "./from-chat.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The text a `content_block_delta` event adds (model-written output), or "". */
function deltaText(event: Obj): string {
  const delta = isObj(event.delta) ? event.delta : {};
  for (const key of ["text", "partial_json", "thinking"])
    if (typeof delta[key] === "string") return delta[key];
  return "";
}

/**
 * Relays `upstream`'s event stream to the client (see the module comment); settles and counts the call.
 * @throws GatewayError 502 when the upstream's answer is not `text/event-stream` (nothing was sent yet).
 */
export async function relayMessagesStream(
  call: CallContext,
  upstream: UpstreamResponse,
  deps: PipelineDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const contentType = String(upstream.headers["content-type"] ?? "");
  if (!/^\s*text\/event-stream\s*(;|$)/i.test(contentType)) {
    upstream.body.on("error", () => {}).destroy();
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
  const meter = new OutputMeter(Number.POSITIVE_INFINITY, tokenizerFor(upstream.deployment.upstreamModel));
  let usage: Obj = {};
  let reported = false;
  let completed = false;
  let first = true;
  const onEvent = (event: EventSourceMessage) => {
    res.write(`${event.event === undefined ? "" : `event: ${event.event}\n`}data: ${event.data}\n\n`);
    if (first) {
      first = false;
      call.firstByteAtEpoch = deps.clock.now();
    }
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      return;
    }
    if (!isObj(data)) return;
    if (data.type === "message_start" && isObj(data.message) && isObj(data.message.usage)) {
      usage = { ...data.message.usage };
    } else if (data.type === "message_delta" && isObj(data.usage)) {
      usage = { ...usage, ...data.usage };
      reported = typeof data.usage.output_tokens === "number";
    } else if (data.type === "content_block_delta") {
      meter.fits(deltaText(data));
      meter.commit();
    } else if (data.type === "message_stop") {
      completed = true;
    }
  };
  const parser = createParser({ onEvent });
  const decoder = new TextDecoder();
  let failed: Error | undefined;
  try {
    for await (const piece of upstream.body as AsyncIterable<Buffer>) {
      if (res.destroyed) break;
      parser.feed(decoder.decode(piece, { stream: true }));
      if (res.writableNeedDrain) await Promise.race([once(res, "drain"), once(res, "close")]);
    }
  } catch (error) {
    if (!res.destroyed) {
      failed = error as Error;
      const body = anthropicErrorBody(502, "The upstream stream failed before it finished.");
      res.write(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
    }
  }
  if (!upstream.body.destroyed) upstream.body.destroy();
  if (!res.destroyed) res.end();
  const status =
    failed !== undefined
      ? 502
      : res.destroyed && !completed && !res.writableFinished
        ? CLIENT_CLOSED_REQUEST
        : 200;
  const counted = chatUsage(usage);
  // Input from message_start; output from message_delta, else the text relayed.
  const booked =
    counted !== undefined && (reported || counted.prompt_tokens > 0)
      ? reported
        ? counted
        : { ...counted, completion_tokens: meter.tokens, total_tokens: counted.prompt_tokens + meter.tokens }
      : undefined;
  settle(call, deps, booked, meter.tokens, status);
  finish(
    deps,
    request,
    status,
    failed !== undefined
      ? "upstream_error"
      : status === CLIENT_CLOSED_REQUEST
        ? CLIENT_CLOSED_TYPE
        : undefined,
  );
}
