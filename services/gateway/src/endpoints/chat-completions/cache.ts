/**
 * The response cache for chat completions: which answers are stored, and a hit's replay as a `chat.completion`
 * object or, for `stream: true`, as `chat.completion.chunk` events ending in `data: [DONE]` (OpenAI API reference,
 * "The chat completion chunk object"), whether the entry was stored from a JSON answer or a stream.
 */
import type { EndpointCache } from "../../pipeline/endpoint.js";
import { replayAnswer } from "../../pipeline/steps/cache-replay.js";
import type { ChatCompletionRequest } from "./schema.js";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Finish reasons of an answer the model ended by itself (not cut by a cap, not filtered). */
const WHOLE = new Set(["stop", "tool_calls", "function_call"]);

/**
 * A `chat.completion` may be stored: it has choices, each ended by the model itself (`stop`, `tool_calls`,
 * `function_call`; never `length`, which a cap or the gateway cut, nor `content_filter`) and none is a refusal
 * (`message.refusal`).
 */
export function wholeChatCompletion(answer: Json): boolean {
  const choices = answer.choices;
  if (!Array.isArray(choices) || choices.length === 0) return false;
  return choices.every((choice) => {
    if (!isObject(choice) || !WHOLE.has(String(choice.finish_reason))) return false;
    const message = isObject(choice.message) ? choice.message : {};
    return message.refusal === undefined || message.refusal === null;
  });
}

/** One choice's message as a chunk's `delta` (tool calls with their `index`). */
function delta(message: Json): Json {
  const out: Json = { role: message.role ?? "assistant" };
  if (message.content !== undefined) out.content = message.content;
  if (message.reasoning_content !== undefined) out.reasoning_content = message.reasoning_content;
  if (Array.isArray(message.tool_calls))
    out.tool_calls = message.tool_calls.map((call, index) => ({ index, ...(isObject(call) ? call : {}) }));
  if (message.function_call !== undefined) out.function_call = message.function_call;
  return out;
}

/**
 * The server-sent events replaying a stored `chat.completion`: per choice a chunk with its whole message as the
 * delta, then one with its `finish_reason`; a usage-only chunk (`choices: []`) when the client asked for usage;
 * then `data: [DONE]`.
 */
export function chatReplayFrames(answer: Json, includeUsage: boolean): string[] {
  const head: Json = {
    id: answer.id,
    object: "chat.completion.chunk",
    created: answer.created,
    model: answer.model,
    ...(answer.system_fingerprint === undefined ? {} : { system_fingerprint: answer.system_fingerprint }),
  };
  const usage = includeUsage ? { usage: null } : {};
  const frame = (chunk: Json) => `data: ${JSON.stringify(chunk)}\n\n`;
  const frames: string[] = [];
  const choices = Array.isArray(answer.choices) ? answer.choices.filter(isObject) : [];
  for (const choice of choices) {
    const index = choice.index ?? 0;
    const message = isObject(choice.message) ? choice.message : {};
    const logprobs = choice.logprobs ?? null;
    frames.push(
      frame({
        ...head,
        choices: [{ index, delta: delta(message), logprobs, finish_reason: null }],
        ...usage,
      }),
    );
    frames.push(
      frame({ ...head, choices: [{ index, delta: {}, finish_reason: choice.finish_reason }], ...usage }),
    );
  }
  if (includeUsage) frames.push(frame({ ...head, choices: [], usage: answer.usage ?? null }));
  frames.push("data: [DONE]\n\n");
  return frames;
}

/** The chat completions endpoint's response cache. */
export const chatCompletionsCache: EndpointCache<ChatCompletionRequest> = {
  replay: replayAnswer((call, answer) =>
    chatReplayFrames(answer, call.body.stream_options?.include_usage === true),
  ),
};
