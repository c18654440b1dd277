import type { ServerResponse } from "node:http";
import type { EventSourceMessage } from "eventsource-parser";
import type { GatewayError } from "../errors/gateway-error.js";
import type { GuardDecision, StreamOutputGuard } from "../guardrails/types.js";
import { withOutput } from "../usage/provider-usage.js";
import type { Usage } from "../usage/types.js";
import { DEFAULT_STREAM_CLIENT_IDLE_TIMEOUT_MS, endIdleClient } from "./client-flow.js";
import type { OutputMeter } from "./output-meter.js";
import { ParkedEvents, type TopUp } from "./output-top-up.js";
import { PieceWriter } from "./piece-writer.js";
import { afterFeed, readEvents } from "./read-events.js";
import { endGuarded, guardFailure, type RelayOptions } from "./relay-sse.js";
import { classifyStreamFailure } from "./stream-end.js";

type Obj = Record<string, unknown>;

/** One upstream event: its `event:` name, its `data:` text and, when that is a JSON object, the object. */
export interface NativeEvent {
  event: string | undefined;
  data: string;
  json: Obj | undefined;
}

/** What one event adds to the answer. */
export interface EventText {
  /** Every model-written text it adds (text, tool arguments, reasoning), for the output meter; "" for none. */
  output: string;
  /** The content text the output guard reads, and its content block's (output item's) index. */
  content?: { index: number; text: string };
}

/**
 * One API's event stream, read for one call (stateful: make one per call). Implemented by each endpoint that
 * relays its upstream's events (`endpoints/responses/native-events.ts`, `endpoints/messages/native-events.ts`).
 */
export interface NativeEventReader {
  /** Reads an event before it is relayed: the text it adds; records usage and the terminal event. */
  read(event: NativeEvent): EventText;
  /** The upstream sent its terminal event (`response.completed`, `message_stop`, …). */
  readonly completed: boolean;
  /**
   * The usage to book, in chat completions' names (tokens): what the upstream reported, its output completed by
   * `outputTokens` (counted on the way) when it did not report that; undefined when it reported nothing.
   */
  usage(outputTokens: number): Usage | undefined;
  /** The SSE text that closes a stream cut at its reservation, in the API's shape; `usage`: what is booked. */
  cut(usage: Usage): string;
  /** The SSE text of an error event in the API's shape (`status`: HTTP status; `type`: the gateway's error type). */
  error(status: number, type: string, message: string): string;
  /**
   * An event's JSON with the output guard's rewritten text: `piece`, the new text of this content event, or
   * (`piece` undefined) an event that repeats whole texts (`response.output_text.done`, …) rewritten from
   * `texts`, the whole released text per content index so far.
   */
  mask(json: Obj, texts: ReadonlyMap<number, string>, piece: string | undefined): Obj;
  /**
   * Reads the API's commonest event (a text delta in the upstream's own member order) without `JSON.parse`:
   * the object `JSON.parse(data)` gives, or undefined for any other event (which is then parsed whole). Stateless;
   * a reader without it has every event parsed.
   */
  readonly plain?: (data: string) => Obj | undefined;
}

/** `reader`, with `see` told about every event before `reader` reads it (to note an id, a final object, …). */
export function observedReader(
  reader: NativeEventReader,
  see: (event: NativeEvent) => void,
): NativeEventReader {
  return {
    get completed() {
      return reader.completed;
    },
    read(event) {
      see(event);
      return reader.read(event);
    },
    usage: (outputTokens) => reader.usage(outputTokens),
    cut: (usage) => reader.cut(usage),
    error: (status, type, message) => reader.error(status, type, message),
    mask: (json, texts, piece) => reader.mask(json, texts, piece),
    ...(reader.plain === undefined ? {} : { plain: reader.plain }),
  };
}

/** Options of {@link relayNative}. */
export interface NativeRelayOptions {
  reader: NativeEventReader;
  /** Counts output tokens; an event past `meter.limit` ends the stream at the reservation (unless `topUp` grants more). */
  meter: OutputMeter;
  /** Asks for more output when an event would pass `meter.limit` (output-top-up.ts); without it: cut at once. */
  topUp?: TopUp;
  /** Prompt tokens to book when the upstream reported none (the call's estimate). */
  promptTokens: number;
  guard?: StreamOutputGuard;
  /** The deployment's idle timeout, ms, named in the timeout's message. */
  idleTimeoutMs: number;
  /** How long the client may read nothing, ms (see {@link RelayOptions.clientIdleTimeoutMs}). */
  clientIdleTimeoutMs?: number;
  /** Called once, when the first event has been read. */
  onFirstEvent?: () => void;
  /** Called with each content text the client got (after the guard), for observers. */
  onContent?: (text: string) => void;
}

/** What happened on a relayed native stream. */
export interface NativeRelayOutcome {
  /** Usage to book (see {@link NativeEventReader.usage}); undefined when the upstream reported none. */
  usage: Usage | undefined;
  /** Output tokens counted on the way. */
  outputTokens: number;
  /** Stopped at the reservation (the client got the API's length stop). */
  cut: boolean;
  /** The upstream ended cleanly, or the stream was cut. */
  completed: boolean;
  /** The upstream failed or timed out while the client was there (it got an error event). */
  upstreamError?: Error;
  /** The client read nothing for `clientIdleTimeoutMs`: its connection was closed (see {@link RelayOutcome.clientIdle}). */
  clientIdle?: boolean;
  /** The status to record for an upstream error: 504 for a timeout, else 502. */
  errorStatus?: number;
  guardDecisions: GuardDecision[];
  /** The output guard blocked the rest of the stream. */
  blocked?: GatewayError;
}

/**
 * One event on its way to the client: the upstream's (`event`, with its content text when it has any), or SSE
 * text of the gateway's own (`wire`).
 */
interface Item {
  event: NativeEvent | undefined;
  content: EventText["content"];
  wire: string | undefined;
  /** {@link payloadOf} the item, set when it is handed to a guard. */
  payload?: string;
}

const sse = (event: string | undefined, data: string) =>
  `${event === undefined ? "" : `event: ${event}\n`}data: ${data}\n\n`;

/**
 * The output guard's view of an item: a `chat.completion.chunk`-like payload of its content text, or `{}`. Made
 * only when there is a guard (a stream without one writes each item as read).
 */
const payloadOf = ({ content }: Item) =>
  content === undefined
    ? "{}"
    : JSON.stringify({ choices: [{ index: content.index, delta: { content: content.text } }] });

/** The text a released payload carries for its choice, or undefined. */
function releasedText(payload: string): string | undefined {
  try {
    const text = (JSON.parse(payload) as { choices?: Array<{ delta?: { content?: unknown } }> }).choices?.[0]
      ?.delta?.content;
    return typeof text === "string" ? text : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes the upstream's events to `res` (whose headers are sent) and ends it; see the module comment.
 * Backpressure: when the client reads slowly, reading from the upstream pauses (client-flow.ts); a client that
 * reads nothing for `clientIdleTimeoutMs` has its connection closed ({@link NativeRelayOutcome.clientIdle}).
 */
export async function relayNative(
  upstream: AsyncIterable<Buffer>,
  res: ServerResponse,
  options: NativeRelayOptions,
): Promise<NativeRelayOutcome> {
  const { reader, meter, guard } = options;
  const outcome: NativeRelayOutcome = {
    usage: undefined,
    outputTokens: 0,
    cut: false,
    completed: false,
    guardDecisions: [],
  };
  /** Whole released content text per index, and whether any of it was rewritten (then repeats are too). */
  const texts = new Map<number, string>();
  let rewritten = false;
  const out = new PieceWriter(res);
  /** Writes `item`; `released`: what the guard released for it, undefined without a guard (the item as read). */
  const write = (item: Item, released: string | undefined) => {
    if (item.wire !== undefined) return out.write(item.wire);
    const event = item.event!;
    let json = event.json;
    if (item.content !== undefined) {
      const text =
        released === undefined || released === item.payload
          ? item.content.text
          : (releasedText(released) ?? "");
      // The whole text is kept only for the guard's rewrites (`reader.mask`), which need it.
      if (guard !== undefined) texts.set(item.content.index, (texts.get(item.content.index) ?? "") + text);
      options.onContent?.(text);
      if (text !== item.content.text && json !== undefined) {
        rewritten = true;
        json = reader.mask(json, texts, text);
      }
    } else if (rewritten && json !== undefined) json = reader.mask(json, texts, undefined);
    out.write(sse(event.event, json === event.json ? event.data : JSON.stringify(json)));
  };
  const queued: Item[] = [];
  const emit = (item: Item) => {
    if (guard === undefined) return write(item, undefined);
    item.payload = payloadOf(item);
    queued.push(item);
  };
  let first = true;
  let stopped = false;
  const parked = new ParkedEvents(meter, options.topUp);
  /** Parked events as read (the reader is stateful: a replayed event is not read twice); made at the first park. */
  let read: WeakMap<EventSourceMessage, { event: NativeEvent; text: EventText }> | undefined;
  const onEvent = (message: EventSourceMessage) => {
    if (stopped || parked.holds(message)) return;
    if (first) {
      first = false;
      options.onFirstEvent?.();
    }
    const { event, text } = read?.get(message) ?? readEvent(reader, message);
    if (!meter.fits(text.output)) {
      if (parked.park(message)) {
        read ??= new WeakMap();
        read.set(message, { event, text });
        return;
      }
      stopped = true;
      outcome.cut = true;
      const usage = bookedUsage(reader, meter.tokens, options.promptTokens);
      emit({ event: undefined, content: undefined, wire: reader.cut(usage) });
      return;
    }
    meter.commit();
    emit({ event, content: text.content, wire: undefined });
  };
  let ended = false;
  const block = (refusal: GatewayError) => {
    ended = true;
    outcome.blocked = refusal;
    if (!res.destroyed) out.write(reader.error(refusal.status, refusal.type, refusal.message));
  };
  /** Hands the queued items to the guard in order, writing what it releases (its payloads map 1:1 to items, in order). */
  const held: Item[] = [];
  const drain = async (g: StreamOutputGuard) => {
    try {
      for (const item of queued.splice(0)) {
        if (res.destroyed || ended) return;
        held.push(item);
        const out = await g.onData(item.payload!);
        if (out !== "hold") for (const released of out) write(held.shift()!, released);
      }
    } catch (error) {
      block(guardFailure(error));
    }
  };
  const end = async (g: StreamOutputGuard) => {
    if (ended) return;
    ended = true;
    await endGuarded(g, res, outcome.guardDecisions, block, (released) => write(held.shift()!, released));
  };
  try {
    await readEvents(
      upstream,
      res,
      out,
      onEvent,
      afterFeed(() => parked.resume(onEvent), guard === undefined ? undefined : () => drain(guard)),
      () => stopped || outcome.blocked !== undefined,
      options.clientIdleTimeoutMs ?? DEFAULT_STREAM_CLIENT_IDLE_TIMEOUT_MS,
    );
    if (!res.destroyed) outcome.completed = true;
    if (guard !== undefined && !res.destroyed && outcome.blocked === undefined)
      await drain(guard).then(() => end(guard));
  } catch (error) {
    if (endIdleClient(res, error)) outcome.clientIdle = true;
    // Reading fails when the client left too (the upstream request is aborted with it): no upstream error then.
    else if (!res.destroyed) {
      outcome.upstreamError = error as Error;
      const failure = classifyStreamFailure(error, options.idleTimeoutMs);
      outcome.errorStatus = failure.status;
      res.write(reader.error(failure.status, failure.type, failure.message));
    }
  }
  if (!res.destroyed) res.end();
  outcome.outputTokens = meter.tokens;
  outcome.usage = outcome.cut
    ? bookedUsage(reader, meter.tokens, options.promptTokens)
    : reader.usage(meter.tokens);
  return outcome;
}

/**
 * Parses an upstream event (its JSON when it is an object; a plain text delta by {@link NativeEventReader.plain})
 * and reads it with `reader`.
 */
function readEvent(
  reader: NativeEventReader,
  message: EventSourceMessage,
): { event: NativeEvent; text: EventText } {
  let json = reader.plain?.(message.data);
  if (json === undefined)
    try {
      const parsed: unknown = JSON.parse(message.data);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) json = parsed as Obj;
    } catch {}
  const event = { event: message.event, data: message.data, json };
  return { event, text: reader.read(event) };
}

/** The usage of a stream cut short: the upstream's input counts (and breakdown) if it gave them, the output relayed. */
function bookedUsage(reader: NativeEventReader, outputTokens: number, promptTokens: number): Usage {
  const reported = reader.usage(outputTokens);
  if (reported !== undefined) return withOutput(reported, outputTokens);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: outputTokens,
    total_tokens: promptTokens + outputTokens,
  };
}
