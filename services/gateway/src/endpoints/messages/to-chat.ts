/**
 * A Messages request (Anthropic API reference, "Messages") as a chat completions request (OpenAI API reference,
 * "Create chat completion"), for deployments that do not serve Messages natively:
 *
 * - `system` (string or text blocks) → a leading `system` message;
 * - a message's `text` / `image` / `document` blocks → content parts (`text`, `image_url` with a data or https
 *   URL, `file` for a base64 PDF; a plain-text document becomes text); `thinking` blocks are dropped;
 * - an assistant's `tool_use` blocks → its `tool_calls` (`input` as JSON `arguments`);
 * - a user's `tool_result` blocks → `tool` messages (`tool_call_id`, the result's text), placed before the rest
 *   of that user message, right after the assistant message that called the tools;
 * - `tools` → function tools (`input_schema` as `parameters`); `tool_choice` `auto` / `any` / `tool` / `none` →
 *   `"auto"` / `"required"` / `{type: "function", function: {name}}` / `"none"`, `disable_parallel_tool_use` →
 *   `parallel_tool_calls: false`;
 * - `max_tokens`, `temperature`, `top_p` as they are; `stop_sequences` → `stop`; `metadata.user_id` → `user`;
 *   `stream` → `stream` with `stream_options.include_usage` (the gateway counts the tokens).
 *
 * Not carried: `top_k` (OpenAI's API has none), `thinking`, prompt caching (`cache_control`), citations, and any
 * field chat completions does not know. Server tools (a tool with a `type` such as `web_search_20250305`) are
 * refused: only the upstream that runs them can.
 */
import { invalidRequest } from "../../errors/gateway-error.js";
import type { MessagesRequest } from "./schema.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A chat content part. */
type ChatPart = Obj & { type: string };

/** The text of a `tool_result`'s `content` (a string or blocks; non-text blocks are named, not carried). */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b) => (isObj(b) && typeof b.text === "string" ? b.text : isObj(b) ? `[${String(b.type)}]` : ""))
    .join("\n");
}

/** An `image` or `document` block's `source` as a URL (data URL for base64), or undefined. */
function sourceUrl(source: unknown): string | undefined {
  if (!isObj(source)) return undefined;
  if (source.type === "base64" && typeof source.data === "string")
    return `data:${String(source.media_type)};base64,${source.data}`;
  if (source.type === "url" && typeof source.url === "string") return source.url;
  return undefined;
}

/**
 * One content block as chat content parts.
 * @throws GatewayError 400 for a block chat completions cannot carry (a `file` source, an unknown type).
 */
function blockParts(block: Obj, where: string): ChatPart[] {
  switch (block.type) {
    case "text":
      return [{ type: "text", text: String(block.text ?? "") }];
    case "image": {
      const url = sourceUrl(block.source);
      if (url === undefined) throw untranslatable(`${where}.source`, "an image source of type file");
      return [{ type: "image_url", image_url: { url } }];
    }
    case "document": {
      const source = isObj(block.source) ? block.source : {};
      if (source.type === "text" && typeof source.data === "string")
        return [{ type: "text", text: source.data }];
      if (source.type === "content") return [{ type: "text", text: resultText(source.content) }];
      const url = sourceUrl(source);
      if (source.type === "base64" && url !== undefined) {
        const filename = typeof block.title === "string" ? block.title : "document.pdf";
        return [{ type: "file", file: { filename, file_data: url } }];
      }
      throw untranslatable(`${where}.source`, `a document source of type ${String(source.type)}`);
    }
    case "thinking":
    case "redacted_thinking":
      return [];
  }
  throw untranslatable(`${where}.type`, `a content block of type ${String(block.type)}`);
}

/** 400 for a request part this model's upstream (chat completions) cannot take. */
function untranslatable(param: string, what: string): ReturnType<typeof invalidRequest> {
  return invalidRequest(
    `This model's upstream serves OpenAI's chat completions, which cannot take ${what} (${param}).`,
    param,
  );
}

/** Parts as a chat `content`: a lone text part as a string. */
function chatContent(parts: ChatPart[]): string | ChatPart[] {
  return parts.length === 1 && parts[0]!.type === "text" ? (parts[0]!.text as string) : parts;
}

/** One Messages message as chat messages (a user's tool results become `tool` messages first). */
function chatMessages(message: MessagesRequest["messages"][number], index: number, out: Obj[]): void {
  const { role, content } = message;
  if (typeof content === "string") {
    out.push({ role, content });
    return;
  }
  const parts: ChatPart[] = [];
  const toolCalls: Obj[] = [];
  for (let i = 0; i < content.length; i++) {
    const block = content[i] as Obj;
    if (block.type === "tool_use") {
      toolCalls.push({
        id: block.id,
        type: "function",
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    } else if (block.type === "tool_result") {
      const text = resultText(block.content);
      out.push({
        role: "tool",
        tool_call_id: block.tool_use_id,
        content: block.is_error === true ? `Error: ${text}` : text,
      });
    } else {
      parts.push(...blockParts(block, `messages[${index}].content[${i}]`));
    }
  }
  if (role === "assistant") {
    const text = parts
      .filter((p) => p.type === "text")
      .map((p) => p.text as string)
      .join("");
    if (toolCalls.length > 0) out.push({ role, content: text === "" ? null : text, tool_calls: toolCalls });
    else out.push({ role, content: text });
  } else if (parts.length > 0) {
    out.push({ role, content: chatContent(parts) });
  }
}

/** `tool_choice` in chat's terms. */
function chatToolChoice(choice: NonNullable<MessagesRequest["tool_choice"]>): unknown {
  switch (choice.type) {
    case "any":
      return "required";
    case "tool":
      return { type: "function", function: { name: choice.name } };
    case "none":
      return "none";
  }
  return "auto";
}

/**
 * The chat completions request for `body` (see the module comment); `model` stays the client's alias (the
 * router puts each deployment's own).
 * @throws GatewayError 400 for what chat completions cannot carry (a server tool, a file-id source).
 */
export function toChatRequest(body: MessagesRequest): Record<string, unknown> {
  const messages: Obj[] = [];
  if (typeof body.system === "string") {
    if (body.system !== "") messages.push({ role: "system", content: body.system });
  } else if (body.system !== undefined && body.system.length > 0) {
    messages.push({ role: "system", content: body.system.map((b) => b.text).join("\n\n") });
  }
  for (let i = 0; i < body.messages.length; i++) chatMessages(body.messages[i]!, i, messages);
  const chat: Obj = { model: body.model, messages, max_tokens: body.max_tokens };
  if (body.temperature !== undefined) chat.temperature = body.temperature;
  if (body.top_p !== undefined) chat.top_p = body.top_p;
  if (body.stop_sequences !== undefined && body.stop_sequences.length > 0) chat.stop = body.stop_sequences;
  if (typeof body.metadata?.user_id === "string") chat.user = body.metadata.user_id;
  if (body.tools !== undefined && body.tools.length > 0) {
    chat.tools = body.tools.map((tool, i) => {
      if (tool.type !== undefined && tool.type !== "custom")
        throw untranslatable(`tools[${i}].type`, `the server tool ${String(tool.type)}`);
      const fn: Obj = { name: tool.name, parameters: tool.input_schema ?? { type: "object" } };
      if (tool.description !== undefined) fn.description = tool.description;
      return { type: "function", function: fn };
    });
  }
  if (body.tool_choice !== undefined) {
    chat.tool_choice = chatToolChoice(body.tool_choice);
    if (body.tool_choice.disable_parallel_tool_use === true && chat.tools !== undefined)
      chat.parallel_tool_calls = false;
  }
  if (body.tags !== undefined) chat.tags = body.tags; // LiteLLM's routing tags, read by the router
  if (body.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}
