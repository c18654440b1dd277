/**
 * Relays a Responses API stream from an upstream that serves the API natively (OpenAI): each server-sent event
 * goes to the client as it came (`event:` line and `data:`), and the call is booked when the stream ends with the
 * usage of its `response.completed` (or `.incomplete` / `.failed`) event, else with the output tokens counted on
 * the way (the text of `response.output_text.delta` and `response.function_call_arguments.delta` events, by the
 * model's tokenizer or the gateway's estimate: `streaming/output-meter.ts`).
 *
 * What it does not do (the chat relay does, for translated streams): run the stream output guardrail, cut the
 * stream at the call's reservation, or end it after the deployment's idle timeout; the gateway's maximum stream
 * duration and the router's request timeout still apply.
 */

import { createParser } from "eventsource-parser";
import type { FastifyReply, FastifyRequest } from "fastify";
import { GatewayError } from "../../errors/gateway-error.js";
import { CLIENT_CLOSED_REQUEST, CLIENT_CLOSED_TYPE, finish, settle } from "../../pipeline/steps/account.js";
import {
  type CallContext,
  DEFAULT_MAX_STREAM_DURATION_MS,
  type PipelineDeps,
  type Usage,
} from "../../pipeline/types.js";
import type { UpstreamResponse } from "../../router/router.js";
import { OutputMeter, tokenizerFor } from "../../streaming/output-meter.js";

interface ResponsesUsage {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
}

/** The Responses API's usage in chat completions' names (tokens); undefined without one. */
export function chatUsage(usage: ResponsesUsage | null | undefined): Usage | undefined {
  if (usage === null || usage === undefined || typeof usage.input_tokens !== "number") return undefined;
  const output = usage.output_tokens ?? 0;
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: output,
    total_tokens: usage.total_tokens ?? usage.input_tokens + output,
  };
}

interface StreamEvent {
  type?: string;
  delta?: unknown;
  sequence_number?: unknown;
  response?: { usage?: ResponsesUsage | null };
}

/**
 * Relays the upstream's event stream to the client and books the call (see the module comment).
 * @throws GatewayError 502 when the upstream's answer is not `text/event-stream` (nothing was sent yet).
 */
export async function relayNativeStream(
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
      "The upstream answered the Responses stream with a body that is not server-sent events.",
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
  });
  const meter = new OutputMeter(Number.POSITIVE_INFINITY, tokenizerFor(upstream.deployment.upstreamModel));
  let usage: Usage | undefined;
  let completed = false;
  let first = true;
  /** The next `sequence_number` after the upstream's last (for an `error` event of the gateway's own). */
  let sequence = 0;
  const parser = createParser({
    onEvent(event) {
      if (first) {
        first = false;
        call.firstByteAtEpoch = deps.clock.now();
      }
      res.write(`${event.event === undefined ? "" : `event: ${event.event}\n`}data: ${event.data}\n\n`);
      let parsed: StreamEvent;
      try {
        parsed = JSON.parse(event.data) as StreamEvent;
      } catch {
        return;
      }
      const type = parsed.type;
      if (typeof parsed.sequence_number === "number") sequence = parsed.sequence_number + 1;
      if (type === "response.output_text.delta" || type === "response.function_call_arguments.delta") {
        if (typeof parsed.delta === "string" && meter.fits(parsed.delta)) meter.commit();
      } else if (
        type === "response.completed" ||
        type === "response.incomplete" ||
        type === "response.failed"
      ) {
        usage = chatUsage(parsed.response?.usage) ?? usage;
        completed = true;
      }
    },
  });
  const maxMs = deps.maxStreamDurationMs ?? DEFAULT_MAX_STREAM_DURATION_MS;
  const deadline = maxMs > 0 ? setTimeout(() => upstream.body.destroy(), maxMs) : undefined;
  const decoder = new TextDecoder();
  let failed = false;
  try {
    for await (const piece of upstream.body) {
      if (res.destroyed) break;
      parser.feed(decoder.decode(piece as Buffer, { stream: true }));
    }
  } catch {
    failed = !res.destroyed;
  } finally {
    clearTimeout(deadline);
  }
  if (!upstream.body.destroyed) upstream.body.destroy();
  if (failed && !completed) {
    const message = "The upstream's Responses stream failed before it completed.";
    res.write(
      `event: error\ndata: ${JSON.stringify({ type: "error", code: "upstream_error", message, param: null, sequence_number: sequence })}\n\n`,
    );
  }
  if (!res.destroyed) res.end();
  const status = completed ? 200 : failed ? 502 : res.destroyed ? CLIENT_CLOSED_REQUEST : 200;
  settle(call, deps, usage, meter.tokens, status);
  finish(
    deps,
    request,
    status,
    status === 502 ? "upstream_error" : status === CLIENT_CLOSED_REQUEST ? CLIENT_CLOSED_TYPE : undefined,
  );
}
