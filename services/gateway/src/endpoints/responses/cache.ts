/**
 * The response cache for the Responses API: only requests with `store: false` (a stored response belongs to the
 * upstream's state, which a replay would not create), answers that completed without a refusal, and a hit's
 * replay as the `response` object or, for `stream: true`, as Responses streaming events (OpenAI API reference,
 * "Streaming events"): `response.created`, `response.in_progress`, per output item `response.output_item.added`,
 * its content (`response.content_part.added`, `response.output_text.delta` / `.done`,
 * `response.content_part.done`, or `response.function_call_arguments.delta` / `.done`),
 * `response.output_item.done`, then `response.completed`; each with a rising `sequence_number`, no `[DONE]`.
 */
import type { EndpointCache } from "../../pipeline/endpoint.js";
import type { NativeStreamCache } from "../../pipeline/steps/answer-native.js";
import { replayAnswer } from "../../pipeline/steps/cache-replay.js";
import { type NativeEventReader, observedReader } from "../../streaming/native-relay.js";
import type { ResponsesRequest } from "./schema.js";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A `response` may be stored: `completed`, and no output message holds a `refusal` part. */
export function wholeResponse(answer: Json): boolean {
  if (answer.status !== "completed" || !Array.isArray(answer.output)) return false;
  return answer.output.every(
    (item) =>
      !isObject(item) ||
      !Array.isArray(item.content) ||
      item.content.every((part) => !isObject(part) || part.type !== "refusal"),
  );
}

/** One output item's content events, between its `output_item.added` and `output_item.done`. */
function itemEvents(item: Json, outputIndex: number, emit: (type: string, fields: Json) => string): string[] {
  const at = { item_id: item.id, output_index: outputIndex };
  if (item.type === "function_call") {
    const args = typeof item.arguments === "string" ? item.arguments : "";
    return [
      emit("response.function_call_arguments.delta", { ...at, delta: args }),
      emit("response.function_call_arguments.done", { ...at, arguments: args }),
    ];
  }
  const parts = Array.isArray(item.content) ? item.content.filter(isObject) : [];
  return parts.flatMap((part, contentIndex) => {
    const where = { ...at, content_index: contentIndex };
    if (part.type !== "output_text")
      return [
        emit("response.content_part.added", { ...where, part }),
        emit("response.content_part.done", { ...where, part }),
      ];
    const text = typeof part.text === "string" ? part.text : "";
    return [
      emit("response.content_part.added", { ...where, part: { ...part, text: "" } }),
      emit("response.output_text.delta", { ...where, delta: text }),
      emit("response.output_text.done", { ...where, text }),
      emit("response.content_part.done", { ...where, part }),
    ];
  });
}

/** The Responses events replaying a stored `response` (see the module comment). */
export function responseReplayEvents(response: Json): string[] {
  let sequence = 0;
  const emit = (type: string, fields: Json) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
  const output = Array.isArray(response.output) ? response.output.filter(isObject) : [];
  const pending = { ...response, status: "in_progress", output: [], usage: null };
  return [
    emit("response.created", { response: pending }),
    emit("response.in_progress", { response: pending }),
    ...output.flatMap((item, index) => {
      const empty = item.type === "function_call" ? { arguments: "" } : { content: [] };
      return [
        emit("response.output_item.added", {
          output_index: index,
          item: { ...item, ...empty, status: "in_progress" },
        }),
        ...itemEvents(item, index, emit),
        emit("response.output_item.done", { output_index: index, item }),
      ];
    }),
    emit("response.completed", { response }),
  ];
}

/**
 * A native stream's reader that also keeps the `response` of its `response.completed` event (the whole
 * response), for the response cache; `cache` is {@link answerNativeStream}'s.
 */
export function completedResponseReader(reader: NativeEventReader): {
  reader: NativeEventReader;
  cache: NativeStreamCache;
} {
  let completed: Record<string, unknown> | undefined;
  const noting = observedReader(reader, (event) => {
    const json = event.json;
    if (json?.type === "response.completed" && isObject(json.response)) completed = json.response;
  });
  return { reader: noting, cache: { answer: () => completed, cacheable: wholeResponse } };
}

/** The Responses endpoint's response cache. */
export const responsesCache: EndpointCache<ResponsesRequest> = {
  eligible: (body) => body.store === false,
  replay: replayAnswer((_call, answer) => responseReplayEvents(answer)),
};
