/**
 * Every text a model reads in a Messages request or answer (Anthropic API reference, "Messages"), as
 * {@link TextSlot}s, in document order:
 *
 * - `system`: the string, or each text block's `text` (scope `system`, group -1);
 * - each message (group: its index, scope: its role): its `content` string, or per block: a `text` block's
 *   `text`; a `tool_use` block's `input` (every string, {@link TOOL_CALL_SCOPE}); a `tool_result` block's
 *   `content` (string or blocks, read like a message's); a `document` block's text source and title/context;
 *   every string of a block type the gateway does not know, but its `type`, ids, `cache_control` and binary
 *   `source` data (images, base64 PDFs);
 * - outside the messages ({@link REQUEST_SCOPE}): `tools[]` (`description` and every string of `input_schema`;
 *   not `name`) and every string of any top-level field the gateway does not know.
 *
 * Not read: `model`, `max_tokens`, sampling settings, `stop_sequences`, `metadata`, `tool_choice`, `stream`.
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

/** Top-level request fields that carry no text a model reads. */
const REQUEST_SETTINGS = new Set([
  "model",
  "max_tokens",
  "stream",
  "temperature",
  "top_p",
  "top_k",
  "stop_sequences",
  "metadata",
  "tool_choice",
  "service_tier",
  "thinking",
  "container",
  "mcp_servers",
  "tags",
]);
/** Block fields that are not text: its type, ids, the tool's name, caching, error flag, citations settings. */
const BLOCK_SETTINGS = new Set([
  "type",
  "id",
  "tool_use_id",
  "name",
  "cache_control",
  "is_error",
  "citations",
]);

/** A block's `source`: a text document's `data` is text; base64/URL/file payloads are not. */
function sourceTexts(block: Obj, scope: TextScope, group: number, out: TextSlot[]): void {
  const source = block.source;
  if (!isObj(source)) return;
  if (source.type === "text") fieldSlot(source, "data", scope, group, out);
  else if (source.type === "content") collectTexts(source, "content", scope, group, out);
}

/** The texts of one content block (`blocks[i]`). */
function blockTexts(blocks: unknown[], i: number, scope: TextScope, group: number, out: TextSlot[]): void {
  const block = blocks[i];
  if (!isObj(block)) {
    collectTexts(blocks, i, scope, group, out);
    return;
  }
  for (const key in block) {
    if (BLOCK_SETTINGS.has(key)) continue;
    const value = block[key];
    if (key === "source") sourceTexts(block, scope, group, out);
    else if (key === "input" && block.type === "tool_use")
      collectTexts(block, key, TOOL_CALL_SCOPE, group, out);
    else if (key === "content" && Array.isArray(value)) {
      for (let j = 0; j < value.length; j++) blockTexts(value, j, scope, group, out);
    } else collectTexts(block, key, scope, group, out);
  }
}

/** The texts of a `content` field (a string or blocks) of `owner`. */
function contentTexts(owner: Obj, scope: TextScope, group: number, out: TextSlot[]): void {
  const content = owner.content;
  if (Array.isArray(content))
    for (let i = 0; i < content.length; i++) blockTexts(content, i, scope, group, out);
  else fieldSlot(owner, "content", scope, group, out);
}

/** A tool definition: every string but its `name` and `type` (description, input_schema, …). */
function toolTexts(tool: unknown, out: TextSlot[]): void {
  if (!isObj(tool)) return;
  for (const key in tool) {
    if (key !== "name" && key !== "type" && key !== "cache_control")
      collectTexts(tool, key, REQUEST_SCOPE, -1, out);
  }
}

/**
 * Every text a model reads in a Messages request body (see the module comment). The slots write into `body`
 * and the objects inside it.
 */
export function messagesRequestTexts(body: Obj): TextSlot[] {
  const out: TextSlot[] = [];
  const system = body.system;
  if (Array.isArray(system)) for (let i = 0; i < system.length; i++) blockTexts(system, i, "system", -1, out);
  else fieldSlot(body, "system", "system", -1, out);
  const messages = body.messages;
  if (Array.isArray(messages)) {
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i];
      if (isObj(m)) contentTexts(m, typeof m.role === "string" ? m.role : "", i, out);
      else collectTexts(messages, i, "", i, out);
    }
  }
  for (const key in body) {
    if (key === "system" || key === "messages" || REQUEST_SETTINGS.has(key)) continue;
    const value = body[key];
    if (key === "tools" && Array.isArray(value)) for (const tool of value) toolTexts(tool, out);
    else collectTexts(body, key, REQUEST_SCOPE, -1, out);
  }
  return out;
}

/** The model-written texts of a Messages answer (`type: "message"`): its content blocks, as the assistant's. */
export function messageAnswerTexts(answer: unknown): TextSlot[] {
  const out: TextSlot[] = [];
  if (isObj(answer)) contentTexts(answer, "assistant", 0, out);
  return out;
}
