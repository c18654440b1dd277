/**
 * How the Responses API's stream events read (OpenAI API reference, "Streaming events", `ResponseStreamEvent`),
 * for the native relay (`streaming/native-relay.ts`) of a stream from an upstream that serves the API itself:
 *
 * - output text: `response.output_text.delta` (the content the output guard reads, by `output_index`),
 *   `response.function_call_arguments.delta`, `response.refusal.delta` and the reasoning deltas (metered only);
 * - usage: `response.completed` (or `.incomplete` / `.failed`) carries `response.usage` (read with its
 *   breakdown by `responsesApiUsage`), the terminal event;
 * - a stream cut at the reservation ends with `response.incomplete` (`incomplete_details.reason`
 *   `max_output_tokens`, the usage booked); a failure, timeout or guard block with an `error` event and
 *   `response.failed`, each with the next `sequence_number` after the upstream's last.
 */

import type { EventText, NativeEvent, NativeEventReader } from "../../streaming/native-relay.js";
import { responsesApiUsage } from "../../usage/provider-usage.js";
import type { Usage } from "../../usage/types.js";
import { responseUsage } from "./response-object.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Deltas of model-written text that are not the answer's content (metered, not guarded). */
const OTHER_DELTAS = new Set([
  "response.function_call_arguments.delta",
  "response.refusal.delta",
  "response.reasoning_text.delta",
  "response.reasoning_summary_text.delta",
]);
const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** An output item (`message`) with its `output_text` parts' text replaced by `text` (first part) and "". */
function maskedItem(item: unknown, text: string | undefined): unknown {
  if (text === undefined || !isObj(item) || !Array.isArray(item.content)) return item;
  let placed = false;
  const content = item.content.map((part: unknown) => {
    if (!isObj(part) || part.type !== "output_text") return part;
    const out = { ...part, text: placed ? "" : text };
    placed = true;
    return out;
  });
  return { ...item, content };
}

/**
 * A `response.output_text.delta` event in OpenAI's member order, with `logprobs` empty and an optional
 * `obfuscation` (OpenAI API reference, `ResponseTextDeltaEvent`): `sequence_number`, `item_id`, `output_index`,
 * `content_index`, the delta as a JSON string literal, `obfuscation`. The id and `obfuscation` are read only when
 * they hold no escape or control character (code units from U+0020, neither `"` nor `\`).
 */
const PLAIN_DELTA =
  /^\{"type":"response\.output_text\.delta","sequence_number":(0|[1-9]\d*),"item_id":"([ !#-[\]-\uffff]*)","output_index":(0|[1-9]\d*),"content_index":(0|[1-9]\d*),"delta":("(?:[^"\\]|\\.)*"),"logprobs":\[\](?:,"obfuscation":"([ !#-[\]-\uffff]*)")?\}$/;

/**
 * The JSON of a plain `response.output_text.delta` event ({@link PLAIN_DELTA}) without `JSON.parse`: the same
 * object, members in the same order; undefined for any other event ({@link NativeEventReader.plain}).
 */
export function plainResponsesDelta(data: string): Obj | undefined {
  const match = PLAIN_DELTA.exec(data);
  if (match === null) return undefined;
  let delta: string;
  try {
    // A JSON string literal; an invalid escape or a raw control character throws (and so would the whole parse).
    delta = JSON.parse(match[5]!) as string;
  } catch {
    return undefined;
  }
  const json: Obj = {
    type: "response.output_text.delta",
    sequence_number: Number(match[1]),
    item_id: match[2],
    output_index: Number(match[3]),
    content_index: Number(match[4]),
    delta,
    logprobs: [],
  };
  if (match[6] !== undefined) json.obfuscation = match[6];
  return json;
}

/** A reader for one call's stream (see the module comment). */
export function responsesEventReader(): NativeEventReader {
  let sequence = 0;
  let shell: Obj | undefined;
  let usage: Usage | undefined;
  let completed = false;
  const sse = (data: Obj & { type: string }) =>
    `event: ${data.type}\ndata: ${JSON.stringify({ ...data, sequence_number: sequence++ })}\n\n`;
  return {
    get completed() {
      return completed;
    },
    plain: plainResponsesDelta,
    read({ json }: NativeEvent): EventText {
      if (json === undefined) return { output: "" };
      if (typeof json.sequence_number === "number") sequence = json.sequence_number + 1;
      const type = json.type;
      const delta = typeof json.delta === "string" ? json.delta : "";
      if (type === "response.output_text.delta") {
        const index = typeof json.output_index === "number" ? json.output_index : 0;
        return { output: delta, content: { index, text: delta } };
      }
      if (typeof type === "string" && OTHER_DELTAS.has(type)) return { output: delta };
      if ((type === "response.created" || type === "response.in_progress") && isObj(json.response))
        shell = json.response;
      if (typeof type === "string" && TERMINAL.has(type)) {
        completed = true;
        usage = responsesApiUsage(isObj(json.response) ? json.response.usage : undefined) ?? usage;
      }
      return { output: "" };
    },
    usage: () => usage,
    cut(booked) {
      const response = {
        ...shell,
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" },
        usage: responseUsage(booked),
      };
      return sse({ type: "response.incomplete", response });
    },
    error(_status, type, message) {
      const out = sse({ type: "error", code: type, message, param: null });
      if (shell === undefined) return out;
      const error = { code: type === "rate_limit_error" ? "rate_limit_exceeded" : "server_error", message };
      return out + sse({ type: "response.failed", response: { ...shell, status: "failed", error } });
    },
    mask(json, texts, piece) {
      if (piece !== undefined) return { ...json, delta: piece };
      const text = typeof json.output_index === "number" ? texts.get(json.output_index) : undefined;
      switch (json.type) {
        case "response.output_text.done":
          return text === undefined ? json : { ...json, text };
        case "response.content_part.done":
          return text === undefined || !isObj(json.part) ? json : { ...json, part: { ...json.part, text } };
        case "response.output_item.done":
          return { ...json, item: maskedItem(json.item, text) };
      }
      if (typeof json.type === "string" && TERMINAL.has(json.type) && isObj(json.response)) {
        const output = Array.isArray(json.response.output) ? json.response.output : [];
        return {
          ...json,
          response: { ...json.response, output: output.map((item, i) => maskedItem(item, texts.get(i))) },
        };
      }
      return json;
    },
  };
}
