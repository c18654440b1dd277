/**
 * The response cache for Anthropic's Messages API: which Messages are stored, and a hit's replay as the `message`
 * object or, for `stream: true`, as Messages events (Anthropic API reference, "Streaming Messages"):
 * `message_start`, per content block `content_block_start` / `content_block_delta` / `content_block_stop`, then
 * `message_delta` (stop reason, output tokens) and `message_stop`.
 */
import type { EndpointCache } from "../../pipeline/endpoint.js";
import type { NativeStreamCache } from "../../pipeline/steps/answer-native.js";
import { replayAnswer } from "../../pipeline/steps/cache-replay.js";
import { type NativeEvent, type NativeEventReader, observedReader } from "../../streaming/native-relay.js";
import type { MessagesRequest } from "./schema.js";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Stop reasons of a Message the model ended by itself (never `max_tokens`, `refusal` or `pause_turn`). */
const WHOLE = new Set(["end_turn", "tool_use", "stop_sequence"]);

/** A Message may be stored: the model ended it by itself ({@link WHOLE}). */
export function wholeMessage(answer: Json): boolean {
  return answer.type === "message" && WHOLE.has(String(answer.stop_reason));
}

const event = (data: Json) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;

/** A content block's start (its fields emptied) and its deltas, per block type. */
function blockEvents(block: Json, index: number): string[] {
  const start = (content_block: Json) => event({ type: "content_block_start", index, content_block });
  const delta = (d: Json) => event({ type: "content_block_delta", index, delta: d });
  const events: string[] = [];
  if (block.type === "text") {
    events.push(start({ ...block, text: "" }), delta({ type: "text_delta", text: block.text ?? "" }));
  } else if (block.type === "tool_use") {
    events.push(
      start({ ...block, input: {} }),
      delta({ type: "input_json_delta", partial_json: JSON.stringify(block.input ?? {}) }),
    );
  } else if (block.type === "thinking") {
    events.push(
      start({ ...block, thinking: "", signature: "" }),
      delta({ type: "thinking_delta", thinking: block.thinking ?? "" }),
    );
    if (typeof block.signature === "string" && block.signature !== "")
      events.push(delta({ type: "signature_delta", signature: block.signature }));
  } else {
    events.push(start(block));
  }
  events.push(event({ type: "content_block_stop", index }));
  return events;
}

/** The Messages events replaying a stored `message` (see the module comment). */
export function messageReplayEvents(message: Json): string[] {
  const usage = isObject(message.usage) ? message.usage : {};
  const content = Array.isArray(message.content) ? message.content.filter(isObject) : [];
  return [
    event({
      type: "message_start",
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 0 },
      },
    }),
    ...content.flatMap(blockEvents),
    event({
      type: "message_delta",
      delta: { stop_reason: message.stop_reason ?? null, stop_sequence: message.stop_sequence ?? null },
      usage: { output_tokens: usage.output_tokens ?? 0 },
    }),
    event({ type: "message_stop" }),
  ];
}

/** Adds one Messages event to the Message being assembled from a stream (`message` from `message_start`). */
function assemble(message: Json | undefined, json: Json): Json | undefined {
  if (json.type === "message_start")
    return isObject(json.message) ? { ...json.message, content: [] } : undefined;
  if (message === undefined) return undefined;
  const content = message.content as Json[];
  const index = typeof json.index === "number" ? json.index : -1;
  if (json.type === "content_block_start" && isObject(json.content_block)) {
    const block = { ...json.content_block };
    if (block.type === "tool_use") block.input = "";
    content[index] = block;
  } else if (json.type === "content_block_delta" && isObject(json.delta) && isObject(content[index])) {
    const block = content[index];
    const { delta } = json;
    if (delta.type === "text_delta") block.text = `${block.text ?? ""}${delta.text ?? ""}`;
    if (delta.type === "input_json_delta") block.input = `${block.input ?? ""}${delta.partial_json ?? ""}`;
    if (delta.type === "thinking_delta") block.thinking = `${block.thinking ?? ""}${delta.thinking ?? ""}`;
    if (delta.type === "signature_delta") block.signature = delta.signature;
  } else if (
    json.type === "content_block_stop" &&
    isObject(content[index]) &&
    content[index].type === "tool_use"
  ) {
    const block = content[index];
    block.input = block.input === "" ? {} : JSON.parse(String(block.input));
  } else if (json.type === "message_delta") {
    if (isObject(json.delta)) Object.assign(message, json.delta);
    if (isObject(json.usage))
      message.usage = { ...(isObject(message.usage) ? message.usage : {}), ...json.usage };
  }
  return message;
}

/**
 * A native Messages stream's reader that also assembles the Message the events carry (Anthropic API reference,
 * "Streaming Messages"), for the response cache; `cache` is {@link answerNativeStream}'s. An event it cannot
 * read leaves no Message (nothing is stored).
 */
export function assemblingReader(reader: NativeEventReader): {
  reader: NativeEventReader;
  cache: NativeStreamCache;
} {
  let message: Json | undefined;
  let broken = false;
  const see = (event: NativeEvent) => {
    if (broken || event.json === undefined) return;
    try {
      message = assemble(message, event.json);
    } catch {
      broken = true;
    }
  };
  return {
    reader: observedReader(reader, see),
    cache: { answer: () => (broken ? undefined : message), cacheable: wholeMessage },
  };
}

/** The Messages endpoint's response cache. */
export const messagesCache: EndpointCache<MessagesRequest> = {
  replay: replayAnswer((_call, answer) => messageReplayEvents(answer)),
};
