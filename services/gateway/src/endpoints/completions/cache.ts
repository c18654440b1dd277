/**
 * The response cache for text completions: which answers are stored, and a hit's replay as a `text_completion`
 * object or, for `stream: true`, as `text_completion` chunks ending in `data: [DONE]` (OpenAI API reference,
 * "Create completion"), whether the entry was stored from a JSON answer or a stream.
 */
import type { EndpointCache } from "../../pipeline/endpoint.js";
import { replayAnswer } from "../../pipeline/steps/cache-replay.js";
import type { CompletionRequest } from "./schema.js";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A `text_completion` may be stored: it has choices and each stopped by itself (`stop`; never `length`). */
export function wholeTextCompletion(answer: Json): boolean {
  const choices = answer.choices;
  return (
    Array.isArray(choices) &&
    choices.length > 0 &&
    choices.every((choice) => isObject(choice) && choice.finish_reason === "stop")
  );
}

/**
 * The server-sent events replaying a stored `text_completion`: one chunk per choice with its whole text and
 * `finish_reason`, a usage-only chunk (`choices: []`) when the client asked for usage, then `data: [DONE]`.
 */
export function completionReplayFrames(answer: Json, includeUsage: boolean): string[] {
  const head = { id: answer.id, object: "text_completion", created: answer.created, model: answer.model };
  const frame = (chunk: Json) => `data: ${JSON.stringify(chunk)}\n\n`;
  const choices = Array.isArray(answer.choices) ? answer.choices.filter(isObject) : [];
  const frames = choices.map((choice) => frame({ ...head, choices: [choice] }));
  if (includeUsage) frames.push(frame({ ...head, choices: [], usage: answer.usage ?? null }));
  frames.push("data: [DONE]\n\n");
  return frames;
}

/** The completions endpoint's response cache. */
export const completionsCache: EndpointCache<CompletionRequest> = {
  replay: replayAnswer((call, answer) =>
    completionReplayFrames(answer, call.body.stream_options?.include_usage === true),
  ),
};
