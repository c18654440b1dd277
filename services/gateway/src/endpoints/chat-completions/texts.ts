/**
 * Every text a model reads in a chat completions request or answer (OpenAI API reference, "Create chat
 * completion" and the chat completion object), as {@link TextSlot}s, in document order:
 *
 * - each message: its `content` string, or every string of every content part whatever its `type` (`text`,
 *   `input_text`, none, unknown) except the binary payloads of `image_url`, `input_audio` and `file` parts; its
 *   `name`, `refusal` and any field the gateway does not know (every string inside, at any depth), in the
 *   message's role as scope; the `arguments` of its `tool_calls` (and legacy `function_call`) in
 *   {@link TOOL_CALL_SCOPE};
 * - outside the messages ({@link REQUEST_SCOPE}): `tools[]` (a function's `description` and every string of its
 *   `parameters` schema; a tool of another type, every string but its `type`), legacy `functions[]`,
 *   `response_format` (its JSON schema's descriptions, titles, enums, …), `prediction`, and every string of any
 *   top-level field the gateway does not know.
 *
 * Not read: identifiers and settings no model reads as text (`model`, sampling parameters, `stop`, `user`,
 * `metadata`, ids, `role`, function names, `tool_choice`, …). Object keys inside walked fields (schema property
 * names) are read unless they are plain identifiers ({@link collectTexts}).
 */
import {
  collectTexts,
  fieldSlot,
  REQUEST_SCOPE,
  type TextScope,
  type TextSlot,
  TOOL_CALL_SCOPE,
} from "../../guardrails/text/slots.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Top-level request fields that carry no text a model reads (identifiers, settings, routing). */
const REQUEST_SETTINGS = new Set([
  "model",
  "stream",
  "stream_options",
  "temperature",
  "top_p",
  "n",
  "max_tokens",
  "max_completion_tokens",
  "stop",
  "seed",
  "user",
  "tool_choice",
  "function_call",
  "parallel_tool_calls",
  "logprobs",
  "top_logprobs",
  "logit_bias",
  "presence_penalty",
  "frequency_penalty",
  "metadata",
  "store",
  "service_tier",
  "reasoning_effort",
  "modalities",
  "audio",
  "verbosity",
  "safety_identifier",
  "prompt_cache_key",
  "web_search_options",
  "tags",
]);
/** Message fields that are not text: its role, the id a tool result answers, a reference to earlier audio. */
const MESSAGE_SETTINGS = new Set(["role", "tool_call_id", "audio"]);
/** Content-part fields that are not text: the part's type, binary payloads (base64 data, URLs, file ids). */
const PART_SETTINGS = new Set(["type", "image_url", "input_audio", "file", "cache_control"]);

/** The texts of a tool call (`{id, type, function: {name, arguments}}`): every string but its id, type and name. */
function toolCallTexts(call: unknown, group: number, out: TextSlot[]): void {
  if (!isObj(call)) return;
  for (const key in call) {
    if (key === "id" || key === "type") continue;
    const fn = call[key];
    if (key === "function" && isObj(fn)) {
      for (const k in fn) if (k !== "name") collectTexts(fn, k, TOOL_CALL_SCOPE, group, out);
    } else {
      collectTexts(call, key, TOOL_CALL_SCOPE, group, out);
    }
  }
}

/** The texts of one content part (any type): every string but the part's settings and binary payloads. */
function partTexts(parts: unknown[], i: number, scope: TextScope, group: number, out: TextSlot[]): void {
  const part = parts[i];
  if (!isObj(part)) collectTexts(parts, i, scope, group, out);
  else for (const key in part) if (!PART_SETTINGS.has(key)) collectTexts(part, key, scope, group, out);
}

/** The texts of one message (or a completion's `message`); `group` is its index. */
export function messageTexts(message: Obj, group: number, out: TextSlot[]): void {
  const scope = typeof message.role === "string" ? message.role : "";
  for (const key in message) {
    if (MESSAGE_SETTINGS.has(key)) continue;
    const value = message[key];
    if (key === "content" && Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) partTexts(value, i, scope, group, out);
    } else if (key === "tool_calls" && Array.isArray(value)) {
      for (const call of value) toolCallTexts(call, group, out);
    } else if (key === "function_call" && isObj(value)) {
      fieldSlot(value, "arguments", TOOL_CALL_SCOPE, group, out);
    } else {
      collectTexts(message, key, scope, group, out);
    }
  }
}

/** A tool definition: a function's description and parameters (not its name or `strict`); else all but `type`. */
function toolTexts(tool: unknown, out: TextSlot[]): void {
  if (!isObj(tool)) return;
  for (const key in tool) {
    if (key === "type") continue;
    const fn = tool[key];
    if (key === "function" && isObj(fn)) functionTexts(fn, out);
    else collectTexts(tool, key, REQUEST_SCOPE, -1, out);
  }
}

function functionTexts(fn: Obj, out: TextSlot[]): void {
  for (const k in fn) if (k !== "name" && k !== "strict") collectTexts(fn, k, REQUEST_SCOPE, -1, out);
}

/**
 * Every text a model reads in a chat completions request body (see the module comment), messages first.
 * The slots write into `body` and the objects inside it.
 */
export function chatRequestTexts(body: Obj): TextSlot[] {
  const out: TextSlot[] = [];
  const messages = body.messages;
  if (Array.isArray(messages)) {
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i];
      if (isObj(m)) messageTexts(m, i, out);
      else collectTexts(messages, i, "", i, out);
    }
  }
  for (const key in body) {
    if (key === "messages" || REQUEST_SETTINGS.has(key)) continue;
    const value = body[key];
    if ((key === "tools" || key === "functions") && Array.isArray(value)) {
      for (const tool of value) {
        if (key === "tools") toolTexts(tool, out);
        else if (isObj(tool)) functionTexts(tool, out);
      }
    } else {
      collectTexts(body, key, REQUEST_SCOPE, -1, out);
    }
  }
  return out;
}

/** Every text of a `chat.completion` answer: each choice's `message`, grouped by choice. */
export function chatCompletionTexts(completion: unknown): TextSlot[] {
  const out: TextSlot[] = [];
  if (!isObj(completion) || !Array.isArray(completion.choices)) return out;
  for (let i = 0; i < completion.choices.length; i++) {
    const choice = completion.choices[i];
    if (isObj(choice) && isObj(choice.message)) messageTexts(choice.message, i, out);
  }
  return out;
}
