/**
 * A chat completions answer (OpenAI API reference, the chat completion object) as a Messages answer
 * (Anthropic API reference, "Messages", the Message object): `id` `msg_…`, `type: "message"`, `role:
 * "assistant"`, the first choice's text as a `text` block and its tool calls as `tool_use` blocks, `stop_reason`
 * from `finish_reason` (`stop` → `end_turn`, `length` → `max_tokens`, `tool_calls` → `tool_use`,
 * `content_filter` → `refusal`), `usage` as `input_tokens` / `output_tokens` (cached prompt tokens as
 * `cache_read_input_tokens`). A stop sequence ends the answer as `end_turn`: chat completions do not say
 * which stop sequence matched.
 */
import { openAiUsage } from "../../usage/provider-usage.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Anthropic's `usage` of a Message. */
export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** The cache writes by lifetime (Anthropic API reference, Messages `usage.cache_creation`). */
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/** Anthropic's `stop_reason` for a chat `finish_reason`. */
export function stopReason(finishReason: unknown): string {
  switch (finishReason) {
    case "length":
      return "max_tokens";
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "content_filter":
      return "refusal";
  }
  return "end_turn";
}

/**
 * A chat `usage` in Anthropic's names (tokens): `input_tokens` without the cache reads and writes, which go to
 * `cache_read_input_tokens` and `cache_creation_input_tokens` (read by `openAiUsage`).
 */
export function messagesUsage(usage: unknown): MessagesUsage {
  const b = openAiUsage(usage)?.breakdown;
  if (b === undefined) return { input_tokens: 0, output_tokens: 0 };
  return {
    input_tokens: b.input,
    output_tokens: b.output,
    cache_creation_input_tokens: b.cache_write_5m + b.cache_write_1h,
    cache_read_input_tokens: b.cache_read,
    cache_creation: {
      ephemeral_5m_input_tokens: b.cache_write_5m,
      ephemeral_1h_input_tokens: b.cache_write_1h,
    },
  };
}

/** `msg_` and the upstream's id (letters, digits, `_`, `-` only). */
export function messageId(chatId: unknown): string {
  const id = typeof chatId === "string" ? chatId.replace(/[^\w-]/g, "") : "";
  return `msg_${id === "" ? Date.now().toString(36) : id}`;
}

/** A tool call's `arguments` (JSON text) as a `tool_use` block's `input` object; `{}` when not an object. */
export function toolInput(args: unknown): Obj {
  if (typeof args !== "string" || args === "") return {};
  try {
    const input = JSON.parse(args);
    return isObj(input) ? input : {};
  } catch {
    return {};
  }
}

/** The Message object for a `chat.completion` object (see the module comment). */
export function fromChatCompletion(completion: unknown): Obj {
  const c = isObj(completion) ? completion : {};
  const choice = Array.isArray(c.choices) && isObj(c.choices[0]) ? c.choices[0] : {};
  const message = isObj(choice.message) ? choice.message : {};
  const content: Obj[] = [];
  if (typeof message.content === "string" && message.content !== "")
    content.push({ type: "text", text: message.content });
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (!isObj(call) || !isObj(call.function)) continue;
      content.push({
        type: "tool_use",
        id: call.id,
        name: call.function.name,
        input: toolInput(call.function.arguments),
      });
    }
  }
  return {
    id: messageId(c.id),
    type: "message",
    role: "assistant",
    model: c.model,
    content,
    stop_reason: stopReason(choice.finish_reason),
    stop_sequence: null,
    usage: messagesUsage(c.usage),
  };
}
