/**
 * Relays an upstream chat-completion stream (server-sent events of `chat.completion.chunk`, ending in
 * `data: [DONE]`; OpenAI API reference, "Streaming") to the client event by event, as each arrives: no
 * buffering beyond one partial event. Along the way it picks up the usage chunk (sent when
 * `stream_options.include_usage` is true) and, when the gateway asked for usage on the client's behalf,
 * keeps it from the client (the usage is read with its breakdown, `usage/provider-usage.ts`): the usage-only chunk is dropped and the `"usage": null` that the upstream adds
 * to every other chunk is removed, so the client sees what a stream without `include_usage` looks like
 * (OpenAI API reference, chat completion chunk object: `usage` is "only present if" it was asked for).
 */

import type { ServerResponse } from "node:http";
import type { EventSourceMessage } from "eventsource-parser";
import { GatewayError } from "../errors/gateway-error.js";
import type { GuardDecision, StreamOutputEnd, StreamOutputGuard } from "../guardrails/types.js";
import { openAiUsage } from "../usage/provider-usage.js";
import type { Usage } from "../usage/types.js";
import { DEFAULT_STREAM_CLIENT_IDLE_TIMEOUT_MS, endIdleClient } from "./client-flow.js";
import { chunkText, type OutputMeter } from "./output-meter.js";
import { ParkedEvents, type TopUp } from "./output-top-up.js";
import { PieceWriter } from "./piece-writer.js";
import { plainContentChunk } from "./plain-chunk.js";
import { afterFeed, readEvents } from "./read-events.js";
import { ReleasedText } from "./released-text.js";
import { type ChunkHead, chunkHead, lengthStop, streamFailure } from "./stream-end.js";
import { parsedPayloadText } from "./stream-text.js";

export interface RelayOptions {
  /** Remove usage from what the client sees (the client did not ask for it). */
  stripUsage: boolean;
  /**
   * Called once, just before the first write: sends the response's headers. Until then nothing is written, so a
   * stream whose first event is not a JSON chunk can still become an error response
   * ({@link RelayOutcome.unsent}). Without it the headers must already be sent.
   */
  open?: () => void;
  /** Called once, when the first event has been written to the client. */
  onFirstChunk?: () => void;
  /** Output guard: sees every payload before the client does (see {@link StreamOutputGuard}). */
  guard?: StreamOutputGuard;
  /** Called with every `data:` payload written to the client (after the guard), `[DONE]` included. */
  onPayload?: (payload: string) => void;
  /**
   * Called, in order, with the text of each payload written to the client (after the guard) that has any: what
   * `StreamText.add` takes from it (`payloadText`, stream-text.ts), never "". A payload is parsed for it only when
   * the relay did not read it already, i.e. when the guard rewrote it ({@link ReleasedText}).
   */
  onText?: (text: string) => void;
  /**
   * Counts output tokens; a chunk that would take the count past `meter.limit` is not relayed and the stream
   * ends there with `finish_reason: "length"` ({@link lengthStop}), unless `topUp` grants more first.
   */
  meter?: OutputMeter;
  /** Asks for more output when a chunk would pass `meter.limit` (output-top-up.ts); without it: cut at once. */
  topUp?: TopUp;
  /** Prompt tokens for the usage chunk of a stream cut at its limit (the upstream's was never read). */
  promptTokens?: number;
  /** The idle timeout between chunks, ms, for the error event's message. */
  idleTimeoutMs?: number;
  /**
   * How long a client may read nothing while the relay waits for it, ms (`stream_client_idle_timeout`; default
   * {@link DEFAULT_STREAM_CLIENT_IDLE_TIMEOUT_MS}); then the stream is ended ({@link RelayOutcome.clientIdle}).
   */
  clientIdleTimeoutMs?: number;
  /**
   * Writes each payload in the client's protocol instead of `data: <payload>\n\n` (an endpoint that answers
   * a translated chat stream in its own events: Responses, Anthropic Messages). Default: chat's own SSE.
   */
  encoder?: StreamEncoder;
}

/**
 * Turns the relay's payloads into the client's wire text, one call per payload, in order: a
 * `chat.completion.chunk` JSON string, `[DONE]`, or an OpenAI-shaped error body (`{"error":{…}}`: a guard's
 * block, an upstream failure or a timeout). Returns the bytes to write (one or more complete SSE events, or ""
 * to write nothing). It may keep state (an encoder is made per call).
 */
export interface StreamEncoder {
  encode(payload: string): string;
}

/** Chat completions' own wire format: each payload as one `data:` event. */
const chatEncoder: StreamEncoder = { encode: (payload) => `data: ${payload}\n\n` };

/** What happened on a relayed stream. */
export interface RelayOutcome {
  /** Usage reported by the upstream, if it sent any. */
  usage?: Usage;
  /** Output tokens relayed, by the meter (0 without one). */
  outputTokens: number;
  /** The stream was stopped at the meter's limit (the client got `finish_reason: "length"` and `[DONE]`). */
  cut: boolean;
  /**
   * Nothing was written (no headers either): the upstream's first event was not a JSON chunk, it sent no event
   * at all, or it failed before its first event. The caller answers with an error response.
   */
  unsent: boolean;
  /** The upstream finished with `[DONE]` or a clean end. */
  completed: boolean;
  /** The upstream failed (or timed out) mid-stream while the client was still there (it got an error event). */
  upstreamError?: Error;
  /**
   * The client read nothing for `clientIdleTimeoutMs`: its connection was closed (`res` destroyed) and the rest
   * of the upstream's stream was not read.
   */
  clientIdle?: boolean;
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

type Chunk = ChunkHead & { usage?: unknown; choices?: Array<{ index?: unknown }> };

/**
 * Writes the upstream's events to `res` and ends it (see {@link RelayOptions.open} for the headers).
 * Backpressure: when the client reads slowly, reading from the upstream pauses (client-flow.ts); a client that
 * reads nothing for `clientIdleTimeoutMs` has its connection closed ({@link RelayOutcome.clientIdle}).
 */
export async function relaySse(
  upstream: AsyncIterable<Buffer>,
  res: ServerResponse,
  options: RelayOptions,
): Promise<RelayOutcome> {
  const { guard, meter } = options;
  const encoder = options.encoder ?? chatEncoder;
  const outcome: RelayOutcome = {
    get outputTokens() {
      return meter?.tokens ?? 0;
    },
    cut: false,
    unsent: false,
    completed: false,
    guardDecisions: [],
  };
  let first = true;
  const out = new PieceWriter(res);
  const collected = options.onText === undefined ? undefined : new ReleasedText(options.onText);
  /** Writes one payload; `text` is its text as read, when it went out as read (see {@link ReleasedText.written}). */
  const write = (data: string, text?: string) => {
    if (first) options.open?.();
    out.write(encoder.encode(data));
    options.onPayload?.(data);
    collected?.written(data, text);
    if (first) {
      first = false;
      options.onFirstChunk?.();
    }
  };
  /** Payloads (and `[DONE]`) parsed but not yet handed to the guard. */
  const queued: string[] = [];
  /** Sends a payload read (or made) by the relay on its way: `text` is its text, when collected. */
  const emit =
    guard === undefined
      ? write
      : (data: string, text?: string) => {
          queued.push(data);
          if (collected !== undefined && data !== "[DONE]") collected.handed(data, text);
        };
  /** An event was seen that parsed as a JSON object (or `[DONE]`). */
  let started = false;
  /** No more upstream events are taken (cut at the limit, or the first event was not a chunk). */
  let stopped = false;
  /** The last chunk relayed (parsed, or its text when read as a plain chunk): its head goes on a cut's chunks. */
  let last: Chunk | string | undefined;
  const choices = new Set<number>();
  const cut = () => {
    stopped = true;
    outcome.cut = true;
    outcome.completed = true;
    const completion = meter?.tokens ?? 0;
    const prompt = options.promptTokens ?? 0;
    const usage = options.stripUsage
      ? undefined
      : { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    const head = last === undefined ? {} : chunkHead(typeof last === "string" ? JSON.parse(last) : last);
    // A length stop's chunks carry no text (an empty `delta`, or an empty legacy `text`).
    for (const payload of lengthStop(head, [...choices], usage)) emit(payload, "");
  };
  const parked = meter === undefined ? undefined : new ParkedEvents(meter, options.topUp);
  const onEvent = (event: EventSourceMessage) => {
    if (stopped || parked?.holds(event)) return;
    const data = event.data;
    if (data === "[DONE]") {
      started = true;
      outcome.completed = true;
      emit(data, "");
      return;
    }
    // Past the first event, a plain content chunk is read without parsing it whole (plain-chunk.ts).
    const plain = started ? plainContentChunk(data) : undefined;
    let chunk: Chunk | undefined;
    if (plain === undefined) {
      try {
        chunk = JSON.parse(data);
      } catch {
        chunk = undefined;
      }
      if (chunk === null || typeof chunk !== "object") {
        if (!started) {
          stopped = true;
          outcome.unsent = true;
          return;
        }
        // A later event that is no chunk: relayed as it came, its bytes counted as output (erring high).
        if (meter !== undefined && !meter.fits(data)) return parked!.park(event) ? undefined : cut();
        meter?.commit();
        emit(data, ""); // not JSON, or no object: no text
        return;
      }
    }
    started = true;
    if (meter !== undefined) {
      if (!meter.fits(plain === undefined ? chunkText(chunk!) : plain.text))
        return parked!.park(event) ? undefined : cut();
      meter.commit();
    }
    if (plain !== undefined) {
      last = data;
      choices.add(plain.index);
    } else {
      last = chunk!;
      if (Array.isArray(chunk!.choices)) {
        for (const choice of chunk!.choices) if (typeof choice?.index === "number") choices.add(choice.index);
      }
      if (chunk!.usage) outcome.usage = openAiUsage(chunk!.usage) ?? outcome.usage;
    }
    // A cheap substring check first: most chunks carry no `"usage"` at all (the client did not ask for it).
    const mentionsUsage = data.includes('"usage"');
    let payload: string | undefined;
    if (!mentionsUsage || !usagePattern.test(data))
      payload = options.stripUsage && mentionsUsage ? data.replace(nullUsagePattern, "") : data;
    else if (!options.stripUsage) payload = data;
    else if (chunk !== undefined && (chunk.choices?.length ?? 0) > 0) {
      const { usage: _asked, ...withoutUsage } = chunk;
      payload = JSON.stringify(withoutUsage);
    }
    if (payload === undefined) return;
    // The payload has the chunk's choices as read (removing `usage` leaves them as they are): its text too.
    emit(payload, collected === undefined ? undefined : readText(payload, plain, chunk));
  };
  let ended = false;
  /** Ends the stream with the guard's refusal as an error event (no `[DONE]`). */
  const block = (refusal: GatewayError) => {
    ended = true;
    outcome.blocked = refusal;
    if (!res.destroyed) write(JSON.stringify(refusal.toBody()), ""); // an error body: no choices
  };
  /** The guarded end: release what the guard held, then `[DONE]`, or its block as an error event. */
  const end = async (guard: StreamOutputGuard, done: boolean) => {
    if (ended) return;
    ended = true;
    const released = await endGuarded(guard, res, outcome.guardDecisions, block, write);
    if (released && done) write("[DONE]", "");
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
  try {
    await readEvents(
      upstream,
      res,
      out,
      onEvent,
      afterFeed(() => parked?.resume(onEvent), guard === undefined ? undefined : () => drainQueue(guard)),
      () => outcome.blocked !== undefined || stopped,
      options.clientIdleTimeoutMs ?? DEFAULT_STREAM_CLIENT_IDLE_TIMEOUT_MS,
    );
    if (!started) outcome.unsent = true;
    if (outcome.unsent && first) return outcome;
    if (!res.destroyed && !outcome.completed) outcome.completed = true;
    if (guard !== undefined && !res.destroyed) await drainQueue(guard).then(() => end(guard, false));
  } catch (error) {
    if (endIdleClient(res, error)) {
      outcome.clientIdle = true;
      return outcome;
    }
    // Reading fails when the client left too (the upstream request is aborted with it): that is no upstream error.
    if (res.destroyed) return outcome;
    outcome.upstreamError = error as Error;
    if (first) {
      outcome.unsent = true;
      return outcome;
    }
    res.write(encoder.encode(streamFailure(error, options.idleTimeoutMs)));
  }
  if (!res.destroyed) res.end();
  return outcome;
}

/**
 * The text of `payload`, a chunk read as `plain` (a plain content chunk) or else parsed as `chunk`, with the same
 * choices: `payloadText` (stream-text.ts) without parsing it again.
 */
function readText(
  payload: string,
  plain: { index: number; text: string } | undefined,
  chunk: unknown,
): string {
  if (plain !== undefined) return plain.index === 0 ? plain.text : "";
  return parsedPayloadText(payload, chunk);
}

/**
 * Asks `guard` how a stream that finished ends ({@link StreamOutputGuard.onEnd}): its decisions go into
 * `decisions`, then its held payloads to `release` in order, or its block (or its throw, {@link guardFailure}) to
 * `block`. Returns whether the payloads were released (false when blocked, or when the client left).
 */
export async function endGuarded(
  guard: StreamOutputGuard,
  res: ServerResponse,
  decisions: GuardDecision[],
  block: (refusal: GatewayError) => void,
  release: (payload: string) => void,
): Promise<boolean> {
  let result: StreamOutputEnd;
  try {
    result = await guard.onEnd();
  } catch (error) {
    block(guardFailure(error));
    return false;
  }
  decisions.push(...result.decisions);
  if (res.destroyed) return false;
  if ("block" in result) {
    block(result.block);
    return false;
  }
  for (const payload of result.release) release(payload);
  return true;
}

/** A guard's throw as the refusal the client sees: its own GatewayError, or a 500 that names no detail. */
export function guardFailure(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return new GatewayError(500, "The output guardrail failed; the rest of the answer was withheld.", {
    type: "guardrail_error",
  });
}
