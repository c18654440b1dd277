/**
 * How Anthropic's Messages stream events read (Anthropic API reference, "Streaming Messages"), for the native
 * relay (`streaming/native-relay.ts`) of a stream from an `anthropic/` deployment:
 *
 * - output text: `content_block_delta` events, `text_delta` (the content the output guard reads, by the block's
 *   `index`), `input_json_delta` and `thinking_delta` (metered only);
 * - usage: `message_start`'s `message.usage` (input tokens, cache reads and writes) and the cumulative
 *   counts of `message_delta`'s `usage` (the latest wins: output tokens, server tool use, and input counts when
 *   repeated), read by `anthropicUsage` with their breakdown; a stream that never reports its output is booked by the text
 *   relayed; `message_stop` is the terminal event;
 * - a stream cut at the reservation ends as Anthropic ends one at `max_tokens`: `content_block_stop` for an open
 *   block, `message_delta` with `stop_reason: "max_tokens"` and the output booked, `message_stop`; a failure,
 *   timeout or guard block with an `error` event in Anthropic's error shape.
 */

import { anthropicErrorBody } from "../../errors/anthropic-error.js";
import type { EventText, NativeEvent, NativeEventReader } from "../../streaming/native-relay.js";
import { anthropicUsage, withOutput } from "../../usage/provider-usage.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

const sse = (data: Obj & { type: string }) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * A `content_block_delta` event of a `text_delta` in Anthropic's member order (Anthropic API reference,
 * "Streaming Messages"): the block's index, the text as a JSON string literal.
 */
const PLAIN_DELTA =
  /^\{"type":"content_block_delta","index":(0|[1-9]\d*),"delta":\{"type":"text_delta","text":("(?:[^"\\]|\\.)*")\}\}$/;

/**
 * The JSON of a plain `text_delta` event ({@link PLAIN_DELTA}) without `JSON.parse`: the same object, members in
 * the same order; undefined for any other event ({@link NativeEventReader.plain}).
 */
export function plainMessagesDelta(data: string): Obj | undefined {
  const match = PLAIN_DELTA.exec(data);
  if (match === null) return undefined;
  try {
    // A JSON string literal; an invalid escape or a raw control character throws (and so would the whole parse).
    const text = JSON.parse(match[2]!) as string;
    return { type: "content_block_delta", index: Number(match[1]), delta: { type: "text_delta", text } };
  } catch {
    return undefined;
  }
}

/** A reader for one call's stream (see the module comment). */
export function messagesEventReader(): NativeEventReader {
  let usage: Obj = {};
  let reported = false;
  let completed = false;
  /** The open content block's index, or -1. */
  let open = -1;
  return {
    get completed() {
      return completed;
    },
    plain: plainMessagesDelta,
    read({ json }: NativeEvent): EventText {
      if (json === undefined) return { output: "" };
      switch (json.type) {
        case "message_start":
          if (isObj(json.message) && isObj(json.message.usage)) usage = { ...json.message.usage };
          break;
        case "message_delta":
          if (isObj(json.usage)) {
            usage = { ...usage, ...json.usage };
            reported = typeof json.usage.output_tokens === "number";
          }
          break;
        case "message_stop":
          completed = true;
          break;
        case "content_block_start":
          open = typeof json.index === "number" ? json.index : 0;
          break;
        case "content_block_stop":
          open = -1;
          break;
        case "content_block_delta": {
          const delta = isObj(json.delta) ? json.delta : {};
          const index = typeof json.index === "number" ? json.index : 0;
          if (typeof delta.text === "string")
            return { output: delta.text, content: { index, text: delta.text } };
          for (const key of ["partial_json", "thinking"])
            if (typeof delta[key] === "string") return { output: delta[key] };
        }
      }
      return { output: "" };
    },
    usage(outputTokens) {
      const counted = anthropicUsage(usage);
      // Input from message_start; output from message_delta, else the text relayed.
      if (counted === undefined || (!reported && counted.prompt_tokens === 0)) return undefined;
      return reported ? counted : withOutput(counted, outputTokens);
    },
    cut(booked) {
      const stop = open < 0 ? "" : sse({ type: "content_block_stop", index: open });
      open = -1;
      return (
        stop +
        sse({
          type: "message_delta",
          delta: { stop_reason: "max_tokens", stop_sequence: null },
          usage: { output_tokens: booked.completion_tokens },
        }) +
        sse({ type: "message_stop" })
      );
    },
    error: (status, _type, message) =>
      `event: error\ndata: ${JSON.stringify(anthropicErrorBody(status, message))}\n\n`,
    mask(json, _texts, piece) {
      if (piece === undefined || !isObj(json.delta)) return json;
      return { ...json, delta: { ...json.delta, text: piece } };
    },
  };
}
