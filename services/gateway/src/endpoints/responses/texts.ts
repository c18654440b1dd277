/**
 * Every text a model reads in a Responses API request or answer (OpenAI API reference, `CreateResponse` and the
 * `Response` object), as {@link TextSlot}s for the guardrails, in document order:
 *
 * - `instructions` (scope `system`, group -1);
 * - `input` as a string (scope `user`, group 0), or each item (group: its index): a message's `content` string
 *   or every string of its parts except their `type` and binary payloads (`image_url`, `file_data`, `file_id`,
 *   `file_url`), in the message's role as scope; a `function_call`'s `arguments` ({@link TOOL_CALL_SCOPE}); a
 *   `function_call_output`'s `output` (scope `tool`); any other item or field, every string but ids and types;
 * - `tools[]`: a function's `description` and every string of its `parameters` (not its name, `strict`,
 *   `type`), any other tool every string but its `type` ({@link REQUEST_SCOPE});
 * - `text.format` (a JSON schema's descriptions, …) and every string of any top-level field the gateway does not
 *   know ({@link REQUEST_SCOPE}).
 *
 * Not read: `model`, sampling settings, `metadata`, `previous_response_id`, `tool_choice`, `store`, … .
 */
import {
  collectTexts,
  fieldSlot,
  REQUEST_SCOPE,
  type TextSlot,
  TOOL_CALL_SCOPE,
} from "../../guardrails/text/slots.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Top-level fields that carry no text a model reads. */
const REQUEST_SETTINGS = new Set([
  "model",
  "input",
  "instructions",
  "tools",
  "stream",
  "stream_options",
  "store",
  "metadata",
  "previous_response_id",
  "conversation",
  "tool_choice",
  "parallel_tool_calls",
  "max_output_tokens",
  "max_tool_calls",
  "temperature",
  "top_p",
  "top_logprobs",
  "truncation",
  "include",
  "background",
  "service_tier",
  "reasoning",
  "user",
  "safety_identifier",
  "prompt_cache_key",
  "tags",
]);
/** Item and part fields that are not text: identifiers, types, roles, statuses, binary payloads. */
const ITEM_SETTINGS = new Set([
  "type",
  "id",
  "call_id",
  "role",
  "status",
  "name",
  "image_url",
  "file_data",
  "file_id",
  "file_url",
  "detail",
]);

/** Every string of `obj`'s fields except the settings. */
function fieldsTexts(obj: Obj, scope: string, group: number, out: TextSlot[]): void {
  for (const key in obj) if (!ITEM_SETTINGS.has(key)) collectTexts(obj, key, scope, group, out);
}

/** One input item (or output item of an answer); `group` is its index. */
function itemTexts(item: Obj, group: number, out: TextSlot[]): void {
  const type = item.type ?? "message";
  if (type === "function_call") {
    fieldSlot(item, "arguments", TOOL_CALL_SCOPE, group, out);
    return;
  }
  if (type === "function_call_output") {
    collectTexts(item, "output", "tool", group, out);
    return;
  }
  const scope = typeof item.role === "string" ? item.role : "";
  const content = item.content;
  for (const key in item) {
    if (ITEM_SETTINGS.has(key)) continue;
    if (key === "content" && Array.isArray(content)) {
      for (let j = 0; j < content.length; j++) {
        const part = content[j];
        if (isObj(part)) fieldsTexts(part, scope, group, out);
        else collectTexts(content, j, scope, group, out);
      }
    } else {
      collectTexts(item, key, scope, group, out);
    }
  }
}

/** Every text of a list of items (`input` or an answer's `output`). */
function itemsTexts(items: unknown[], out: TextSlot[]): void {
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (isObj(item)) itemTexts(item, i, out);
    else collectTexts(items, i, "user", i, out);
  }
}

/**
 * Every text a model reads in a Responses request body (see the module comment). The slots write into `body`
 * and the objects inside it.
 */
export function responsesRequestTexts(body: Obj): TextSlot[] {
  const out: TextSlot[] = [];
  fieldSlot(body, "instructions", "system", -1, out);
  if (typeof body.input === "string") fieldSlot(body, "input", "user", 0, out);
  else if (Array.isArray(body.input)) itemsTexts(body.input, out);
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools) {
      if (!isObj(tool)) continue;
      for (const key in tool) {
        if (key === "type" || (tool.type === "function" && (key === "name" || key === "strict"))) continue;
        collectTexts(tool, key, REQUEST_SCOPE, -1, out);
      }
    }
  }
  for (const key in body) {
    if (!REQUEST_SETTINGS.has(key)) collectTexts(body, key, REQUEST_SCOPE, -1, out);
  }
  return out;
}

/** Every model-written text of a `response` object: its output items' text parts and function call arguments. */
export function responseOutputTexts(response: unknown): TextSlot[] {
  const out: TextSlot[] = [];
  if (isObj(response) && Array.isArray(response.output)) itemsTexts(response.output, out);
  return out;
}
