/**
 * Anthropic Messages answer → chat completion (Anthropic API reference "Messages": the message object;
 * OpenAI API reference: the `chat.completion` object): text blocks → `message.content`, `tool_use` blocks →
 * `message.tool_calls` (input as a JSON string), `stop_reason` → `finish_reason`, `usage` → chat's usage.
 * Thinking blocks are not passed on (chat completions has no field for them).
 */
import { anthropicUsage } from "../../usage/provider-usage.js";

/** Anthropic's `usage` object (tokens; Anthropic API reference, Messages, `usage`). */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation?: { ephemeral_5m_input_tokens?: number; ephemeral_1h_input_tokens?: number } | null;
  server_tool_use?: { web_search_requests?: number } | null;
}

/** An Anthropic message object (the fields read). */
export interface AnthropicAnswer {
  id?: string;
  model?: string;
  content?: Array<{ type?: string; text?: string; id?: string; name?: string; input?: unknown }>;
  stop_reason?: string | null;
  usage?: AnthropicUsage;
}

/** Chat's `finish_reason` values. */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter";

/**
 * `stop_reason` → `finish_reason`: end_turn, stop_sequence, pause_turn (and none) → stop; max_tokens →
 * length; tool_use → tool_calls; refusal → content_filter.
 */
export function finishReason(stopReason: string | null | undefined): FinishReason {
  switch (stopReason) {
    case "max_tokens":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      return "stop";
  }
}

/**
 * Chat's usage from Anthropic's (`anthropicUsage` reads it): `prompt_tokens` = input + cache writes + cache
 * reads, `completion_tokens` = output; cache reads also as OpenAI's `prompt_tokens_details.cached_tokens`, and
 * the cache writes, their 5-minute / 1-hour split and the web searches in LiteLLM's and Anthropic's names
 * (`cache_creation_input_tokens`, `cache_read_input_tokens`, `cache_creation`, `server_tool_use`), which
 * `openAiUsage` reads back when the chat answer is booked.
 */
export function chatUsage(usage: AnthropicUsage | undefined): Record<string, unknown> {
  const read = anthropicUsage(usage ?? {})!;
  const b = read.breakdown!;
  const written = b.cache_write_5m + b.cache_write_1h;
  const out: Record<string, unknown> = {
    prompt_tokens: read.prompt_tokens,
    completion_tokens: read.completion_tokens,
    total_tokens: read.total_tokens,
    prompt_tokens_details: { cached_tokens: b.cache_read },
    cache_creation_input_tokens: written,
    cache_read_input_tokens: b.cache_read,
  };
  if (b.cache_write_1h > 0)
    out.cache_creation = {
      ephemeral_5m_input_tokens: b.cache_write_5m,
      ephemeral_1h_input_tokens: b.cache_write_1h,
    };
  if (b.web_search_requests > 0) out.server_tool_use = { web_search_requests: b.web_search_requests };
  return out;
}

/**
 * The `chat.completion` for an Anthropic message.
 * @param created Unix seconds for `created` (Anthropic's message has no time).
 */
export function toChatCompletion(answer: AnthropicAnswer, created: number): Record<string, unknown> {
  let text: string | null = null;
  const toolCalls: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }> =
    [];
  for (const block of answer.content ?? []) {
    if (block.type === "text" && typeof block.text === "string") text = (text ?? "") + block.text;
    else if (block.type === "tool_use") {
      toolCalls.push({
        id: String(block.id),
        type: "function",
        function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const message: Record<string, unknown> = { role: "assistant", content: text, refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: answer.id ?? "msg_unknown",
    object: "chat.completion",
    created,
    model: answer.model ?? "",
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(answer.stop_reason) }],
    usage: chatUsage(answer.usage),
  };
}

/**
 * The message of an Anthropic error body (`{type:"error", error:{type, message}}`) with its type, e.g.
 * `Overloaded (overloaded_error)`; undefined for any other body.
 */
export function anthropicErrorMessage(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as { type?: unknown; error?: { type?: unknown; message?: unknown } };
    if (parsed?.type !== "error" || typeof parsed.error?.message !== "string") return undefined;
    const type = typeof parsed.error.type === "string" ? ` (${parsed.error.type})` : "";
    return `${parsed.error.message}${type}`;
  } catch {
    return undefined;
  }
}
