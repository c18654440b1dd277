/**
 * Assembles a streamed answer into the JSON answer the client asked for, cutting it at the call's reservation:
 * how the gateway calls a deployment that ignores output caps (`router/cap-ignorers.ts`) for a client that did
 * not ask to stream. The stream is the upstream's server-sent events of `chat.completion.chunk` (or, for the
 * legacy completions API, `text_completion` chunks), ending in `data: [DONE]`; the result follows OpenAI's API
 * reference for the non-streamed answer (`CreateChatCompletionResponse`, `CreateCompletionResponse`):
 *
 * - chat: per choice (`index`), `message.role`, `content` (the deltas' text joined; `null` when the choice wrote
 *   no text but tool calls or a refusal), `refusal`, `reasoning_content` when a reasoning server streamed it,
 *   `tool_calls` (per `delta.tool_calls[].index`: the first `id`, `type` and `function.name`, `arguments`
 *   joined), the legacy `function_call` likewise, `logprobs` (`content`/`refusal` arrays joined),
 *   `finish_reason`;
 * - completions: per choice, `text` joined, `logprobs` (`tokens`, `token_logprobs`, `top_logprobs`,
 *   `text_offset` joined), `finish_reason`;
 * - `id`, `created`, `model`, `system_fingerprint`, `service_tier` from the chunks; `usage` from the usage chunk
 *   (`stream_options.include_usage`), else the prompt estimate and the output counted.
 *
 * Output is counted by an {@link OutputMeter} as chunks arrive: a chunk that would take the count past the
 * meter's limit is not taken unless a top-up raises the limit first; else reading stops, every unfinished choice (and every expected choice not yet begun)
 * gets `finish_reason: "length"`, and `usage` is the prompt estimate plus the output counted (the upstream's was
 * never read).
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { GatewayError } from "../errors/gateway-error.js";
import { chunkText, type OutputMeter } from "./output-meter.js";
import { ParkedEvents, type TopUp } from "./output-top-up.js";

/** The JSON answer assembled from a stream, and how the stream ended. */
export interface AssembledAnswer {
  /** A `chat.completion` or a `text_completion` object, with `usage`. */
  answer: Record<string, unknown>;
  /** The stream was stopped at the meter's limit. */
  cut: boolean;
}

/** What one choice's deltas added up to so far. */
interface ChoiceState {
  role?: string;
  text: string;
  wroteText: boolean;
  refusal?: string;
  reasoning?: string;
  toolCalls: Map<number, { id?: string; type?: string; name: string; arguments: string }>;
  functionCall?: { name: string; arguments: string };
  logprobs?: Record<string, unknown[] | null>;
  finish: string | null;
}

type Json = Record<string, unknown>;

/** The fields every chunk repeats that the answer takes (the last value given wins). */
const HEAD_FIELDS = ["id", "object", "created", "model", "system_fingerprint", "service_tier"] as const;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const str = (value: unknown) => (typeof value === "string" ? value : "");

/** Joins the array members of a chunk choice's `logprobs` into the choice's (OpenAI streams them piece by piece). */
function joinLogprobs(state: ChoiceState, logprobs: unknown): void {
  if (!isObject(logprobs)) return;
  state.logprobs ??= {};
  for (const [name, value] of Object.entries(logprobs)) {
    const joined = state.logprobs[name];
    // A part no chunk gave (`"refusal": null`) stays null, as OpenAI's answer has it.
    if (!Array.isArray(value)) state.logprobs[name] = joined ?? null;
    else if (Array.isArray(joined)) joined.push(...value);
    else state.logprobs[name] = [...value];
  }
}

/** Adds one chunk choice's delta (chat) or text (completions) to its state. */
function addChoice(state: ChoiceState, choice: Json): void {
  if (typeof choice.text === "string") {
    state.text += choice.text;
    state.wroteText = true;
  }
  const delta = choice.delta;
  if (isObject(delta)) {
    if (typeof delta.role === "string") state.role ??= delta.role;
    if (typeof delta.content === "string") {
      state.text += delta.content;
      if (delta.content !== "") state.wroteText = true;
    }
    if (typeof delta.refusal === "string") state.refusal = (state.refusal ?? "") + delta.refusal;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === "string") state.reasoning = (state.reasoning ?? "") + reasoning;
    if (isObject(delta.function_call)) {
      state.functionCall ??= { name: "", arguments: "" };
      state.functionCall.name ||= str(delta.function_call.name);
      state.functionCall.arguments += str(delta.function_call.arguments);
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) {
        if (!isObject(call)) continue;
        const index = typeof call.index === "number" ? call.index : state.toolCalls.size;
        let entry = state.toolCalls.get(index);
        if (entry === undefined) {
          entry = { name: "", arguments: "" };
          state.toolCalls.set(index, entry);
        }
        if (typeof call.id === "string" && call.id !== "") entry.id ??= call.id;
        if (typeof call.type === "string") entry.type ??= call.type;
        const fn = isObject(call.function) ? call.function : {};
        entry.name ||= str(fn.name);
        entry.arguments += str(fn.arguments);
      }
    }
  }
  joinLogprobs(state, choice.logprobs);
  if (typeof choice.finish_reason === "string") state.finish = choice.finish_reason;
}

/** A chat choice as OpenAI's non-streamed answer has it. */
function chatChoice(index: number, state: ChoiceState): Json {
  const toolCalls = [...state.toolCalls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, call]) => ({
      id: call.id ?? "",
      type: call.type ?? "function",
      function: { name: call.name, arguments: call.arguments },
    }));
  const silent = !state.wroteText && (toolCalls.length > 0 || state.refusal !== undefined);
  const message: Json = {
    role: state.role ?? "assistant",
    content: silent ? null : state.text,
    refusal: state.refusal ?? null,
    ...(state.reasoning === undefined ? {} : { reasoning_content: state.reasoning }),
    ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
    ...(state.functionCall === undefined ? {} : { function_call: state.functionCall }),
  };
  return { index, message, logprobs: state.logprobs ?? null, finish_reason: state.finish };
}

/** A legacy completion's choice as OpenAI's non-streamed answer has it. */
function textChoice(index: number, state: ChoiceState): Json {
  return { text: state.text, index, logprobs: state.logprobs ?? null, finish_reason: state.finish };
}

/** The error a stream carried as an event (`{"error":{…}}`), as the client's 502. */
function upstreamFailed(event: Json): GatewayError {
  const message = isObject(event.error) ? str(event.error.message) : "";
  return new GatewayError(
    502,
    `The upstream failed while answering${message === "" ? "" : `: ${message.slice(0, 200)}`}.`,
    { type: "upstream_error" },
  );
}

/**
 * Reads `upstream`'s events into one JSON answer (see the module comment).
 * @param meter counts the output; its `limit` is where the answer is cut.
 * @param promptTokens the prompt estimate, for the usage of an answer that was cut.
 * @param choices how many choices the call asked for (`n`): those not begun when the answer is cut are added
 *   empty, with `finish_reason: "length"`.
 * @param topUp asks the budgets for more output when a chunk would pass the meter's limit (as a relayed stream
 *   does, `output-top-up.ts`); the answer is cut only when none is granted. Absent: cut at the limit.
 * @throws GatewayError 502 `upstream_error` when the stream carried an error event or no chunk at all; what
 *   reading the upstream throws (a timeout, a reset, the client's abort).
 */
export async function assembleJson(
  upstream: AsyncIterable<Buffer>,
  meter: OutputMeter,
  promptTokens: number,
  choices: number,
  topUp?: TopUp,
): Promise<AssembledAnswer> {
  const parked = new ParkedEvents(meter, topUp);
  const states = new Map<number, ChoiceState>();
  let head: Json | undefined;
  let usage: unknown;
  let cut = false;
  let done = false;
  let failure: GatewayError | undefined;
  const onEvent = (event: EventSourceMessage) => {
    if (done || cut || failure !== undefined || parked.holds(event)) return;
    if (event.data === "[DONE]") {
      done = true;
      return;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(event.data);
    } catch {
      return; // not a chunk (a keep-alive comment's data, say): nothing to assemble
    }
    if (!isObject(chunk)) return;
    if ("error" in chunk && !("choices" in chunk)) {
      failure = upstreamFailed(chunk);
      return;
    }
    // The head first: a stream cut at its first chunk still answers with the upstream's id and model.
    head ??= {};
    for (const field of HEAD_FIELDS) if (chunk[field] != null) head[field] = chunk[field];
    if (!meter.fits(chunkText(chunk))) {
      if (!parked.park(event)) cut = true;
      return;
    }
    meter.commit();
    if (isObject(chunk.usage)) usage = chunk.usage;
    if (!Array.isArray(chunk.choices)) return;
    for (const choice of chunk.choices) {
      if (!isObject(choice)) continue;
      const index = typeof choice.index === "number" ? choice.index : 0;
      let state = states.get(index);
      if (state === undefined) {
        state = { text: "", wroteText: false, toolCalls: new Map(), finish: null };
        states.set(index, state);
      }
      addChoice(state, choice);
    }
  };
  const parser = createParser({ onEvent });
  const decoder = new TextDecoder();
  for await (const piece of upstream) {
    parser.feed(decoder.decode(piece, { stream: true }));
    await parked.resume(onEvent);
    if (done || cut || failure !== undefined) break;
  }
  if (failure !== undefined) throw failure;
  if (head === undefined)
    throw new GatewayError(502, "The upstream answered the stream without a chunk.", {
      type: "upstream_error",
    });
  const text = head.object === "text_completion";
  if (cut) {
    for (let index = 0; index < choices; index++)
      if (!states.has(index))
        states.set(index, { text: "", wroteText: false, toolCalls: new Map(), finish: null });
    for (const state of states.values()) state.finish ??= "length";
  }
  // A cut stream's usage was never read; a stream without usage is counted like the relay counts it.
  if (cut || usage === undefined)
    usage = {
      prompt_tokens: promptTokens,
      completion_tokens: meter.tokens,
      total_tokens: promptTokens + meter.tokens,
    };
  const assembled = [...states.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, state]) => (text ? textChoice(index, state) : chatChoice(index, state)));
  for (const choice of assembled) choice.finish_reason ??= "stop";
  const answer: Json = {
    id: head.id,
    object: text ? "text_completion" : "chat.completion",
    created: head.created,
    model: head.model,
    ...(head.system_fingerprint === undefined ? {} : { system_fingerprint: head.system_fingerprint }),
    ...(head.service_tier === undefined ? {} : { service_tier: head.service_tier }),
    choices: assembled,
    usage,
  };
  return { answer, cut };
}
