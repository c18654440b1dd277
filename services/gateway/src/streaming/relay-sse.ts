/**
 * Relays an upstream chat-completion stream (server-sent events of `chat.completion.chunk`, ending in
 * `data: [DONE]`; OpenAI API reference, "Streaming") to the client event by event, as each arrives: no
 * buffering beyond one partial event. Along the way it picks up the usage chunk (sent when
 * `stream_options.include_usage` is true) and, when the gateway asked for usage on the client's behalf,
 * keeps it from the client: the usage-only chunk is dropped and the `"usage": null` that the upstream adds
 * to every other chunk is removed, so the client sees what a stream without `include_usage` looks like
 * (OpenAI API reference, chat completion chunk object: `usage` is "only present if" it was asked for).
 */

import { once } from "node:events";
import type { ServerResponse } from "node:http";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { GuardDecision, StreamOutputEnd, StreamOutputGuard } from "../chat/hooks.js";
import { GatewayError } from "../errors/gateway-error.js";

/** OpenAI `usage`, tokens. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface RelayOptions {
  /** Remove usage from what the client sees (the client did not ask for it). */
  stripUsage: boolean;
  /** Called once, when the first event has been written to the client. */
  onFirstChunk?: () => void;
  /** Output guard: sees every payload before the client does (see {@link StreamOutputGuard}). */
  guard?: StreamOutputGuard;
  /** Called with every `data:` payload written to the client (after the guard), `[DONE]` included. */
  onPayload?: (payload: string) => void;
}

/** What happened on a relayed stream. */
export interface RelayOutcome {
  /** Usage reported by the upstream, if it sent any. */
  usage?: Usage;
  /** Events carrying at least one choice (a rough completion-token count when usage is missing). */
  choiceChunks: number;
  /** The upstream finished with `[DONE]` or a clean end. */
  completed: boolean;
  /** The upstream failed mid-stream while the client was still there (the client got an error event). */
  upstreamError?: Error;
  /** The output guard's decisions (empty without a guard, or when the stream did not finish). */
  guardDecisions: GuardDecision[];
  /** The output guard blocked the rest of the stream (the client got this error as an event). */
  blocked?: GatewayError;
}

const usagePattern = /"usage"\s*:\s*\{/;
/**
 * A top-level-looking `"usage": null` member with its comma. Inside a JSON string a quote is escaped (`\"`),
 * so a `"usage"` preceded by a comma, a brace or whitespace is a key, never text a model wrote.
 */
const nullUsagePattern = /,\s*"usage"\s*:\s*null(?=\s*[,}])|(?<=[{\s])"usage"\s*:\s*null\s*,/;
const emptyChoicesPattern = /"choices"\s*:\s*\[\s*\]/;

/**
 * Writes the upstream's events to `res` (whose headers are already sent) and ends it.
 * Backpressure: when the client reads slowly, reading from the upstream pauses.
 */
export async function relaySse(
  upstream: AsyncIterable<Buffer>,
  res: ServerResponse,
  options: RelayOptions,
): Promise<RelayOutcome> {
  const outcome: RelayOutcome = { choiceChunks: 0, completed: false, guardDecisions: [] };
  const { guard } = options;
  let first = true;
  const write = (data: string) => {
    res.write(`data: ${data}\n\n`);
    options.onPayload?.(data);
    if (first) {
      first = false;
      options.onFirstChunk?.();
    }
  };
  /** Payloads (and `[DONE]`) parsed but not yet handed to the guard. */
  const queued: string[] = [];
  const emit = guard === undefined ? write : (data: string) => queued.push(data);
  const onEvent = (event: EventSourceMessage) => {
    const data = event.data;
    if (data === "[DONE]") {
      outcome.completed = true;
      emit(data);
      return;
    }
    if (!emptyChoicesPattern.test(data)) outcome.choiceChunks++;
    if (!usagePattern.test(data)) {
      emit(options.stripUsage ? data.replace(nullUsagePattern, "") : data);
      return;
    }
    let chunk: { usage?: Usage | null; choices?: unknown[] };
    try {
      chunk = JSON.parse(data);
    } catch {
      emit(data);
      return;
    }
    if (chunk.usage) outcome.usage = chunk.usage;
    if (!options.stripUsage) emit(data);
    else if ((chunk.choices?.length ?? 0) > 0) {
      const { usage: _asked, ...withoutUsage } = chunk;
      emit(JSON.stringify(withoutUsage));
    }
  };
  let ended = false;
  /** Ends the stream with the guard's refusal as an error event (no `[DONE]`). */
  const block = (refusal: GatewayError) => {
    ended = true;
    outcome.blocked = refusal;
    if (!res.destroyed) write(JSON.stringify(refusal.toBody()));
  };
  /** The guarded end: release what the guard held, then `[DONE]`, or its block as an error event. */
  const end = async (guard: StreamOutputGuard, done: boolean) => {
    if (ended) return;
    ended = true;
    let result: StreamOutputEnd;
    try {
      result = await guard.onEnd();
    } catch (error) {
      return block(guardFailure(error));
    }
    outcome.guardDecisions.push(...result.decisions);
    if (res.destroyed) return;
    if ("block" in result) return block(result.block);
    for (const payload of result.release) write(payload);
    if (done) write("[DONE]");
  };
  /** Hands the queued payloads to the guard; a guard that throws ends the stream like a block. */
  const drainQueue = async (guard: StreamOutputGuard) => {
    try {
      for (const data of queued.splice(0)) {
        if (res.destroyed || ended) return;
        if (data === "[DONE]") {
          await end(guard, true);
          continue;
        }
        const out = await guard.onData(data);
        if (out !== "hold") for (const payload of out) write(payload);
      }
    } catch (error) {
      block(guardFailure(error));
    }
  };
  const parser = createParser({ onEvent });
  const decoder = new TextDecoder();
  try {
    for await (const piece of upstream) {
      if (res.destroyed) break;
      res.cork();
      parser.feed(decoder.decode(piece, { stream: true }));
      if (guard !== undefined) await drainQueue(guard);
      res.uncork();
      if (outcome.blocked !== undefined) break;
      if (res.writableNeedDrain) await Promise.race([once(res, "drain"), once(res, "close")]);
    }
    if (!res.destroyed && !outcome.completed) outcome.completed = true;
    if (guard !== undefined && !res.destroyed) await drainQueue(guard).then(() => end(guard, false));
  } catch (error) {
    // Reading fails when the client left too (the upstream request is aborted with it): that is no upstream error.
    if (res.destroyed) return outcome;
    outcome.upstreamError = error as Error;
    const body = {
      error: {
        message: "The upstream stream failed before it finished.",
        type: "upstream_error",
        param: null,
        code: "502",
      },
    };
    res.write(`data: ${JSON.stringify(body)}\n\n`);
  }
  if (!res.destroyed) res.end();
  return outcome;
}

/** A guard's throw as the refusal the client sees: its own GatewayError, or a 500 that names no detail. */
function guardFailure(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return new GatewayError(500, "The output guardrail failed; the rest of the answer was withheld.", {
    type: "guardrail_error",
  });
}
