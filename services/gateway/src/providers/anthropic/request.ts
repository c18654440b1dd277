/**
 * Chat completions request → Anthropic Messages request (OpenAI API reference "Create chat completion";
 * Anthropic API reference "Messages", `POST /v1/messages`):
 * - `system` and `developer` messages → `system` (text blocks, in order);
 * - `user`/`assistant` messages → turns whose content is text and image blocks (`image_url` with a `data:`
 *   URL → a base64 image source, an http(s) URL → a url image source); an assistant's `tool_calls` →
 *   `tool_use` blocks (arguments parsed from their JSON string); `tool` messages → `tool_result` blocks in a
 *   user turn. Consecutive turns of one role are merged, since Anthropic wants the roles to alternate;
 * - `tools` → `{name, description, input_schema}`; `tool_choice` auto/none/required/named →
 *   `{type: auto|none|any|tool}` (`parallel_tool_calls: false` → `disable_parallel_tool_use`);
 * - `cache_control` (Anthropic's prompt-caching breakpoint, `{type: "ephemeral", ttl?: "5m" | "1h"}`; Anthropic
 *   API reference "Prompt caching"), as LiteLLM takes it on a chat request: on a content part → on its block; on
 *   a message (system, user, assistant, tool) → on the last block that message produced; on a tool (beside
 *   `function`, or inside it) → on the Anthropic tool;
 * - `max_tokens` (required by Anthropic) = `max_completion_tokens` ?? `max_tokens` ?? the deployment's
 *   `model_info.max_output_tokens` ?? the gateway's default
 *   cap; `temperature`, `top_p`, `stop` → `stop_sequences`, `user` → `metadata.user_id`, `stream`.
 * Other chat fields (`n`, `response_format`, `logprobs`, …) have no Messages equivalent and are not sent,
 * as Anthropic's own OpenAI compatibility layer ignores them; `n` > 1 is refused.
 */
import { DEFAULT_MAX_OUTPUT_TOKENS } from "../../cost/estimate.js";
import { GatewayError } from "../../errors/gateway-error.js";

/** A prompt-caching breakpoint as the client gave it (`{type: "ephemeral", ttl?}`), passed on unchanged. */
export type CacheControl = Record<string, unknown>;

/** A content block of a Messages turn (the subset the translation writes), with its optional breakpoint. */
export type AnthropicBlock = (
  | { type: "text"; text: string }
  | {
      type: "image";
      source: { type: "base64"; media_type: string; data: string } | { type: "url"; url: string };
    }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | {
      type: "tool_result";
      tool_use_id: string;
      content: string | Array<{ type: "text"; text: string }>;
    }
) & { cache_control?: CacheControl };

/** One turn of a Messages request. */
export interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicBlock[];
}

/** The Messages request body the translation writes. */
export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: Array<{ type: "text"; text: string; cache_control?: CacheControl }>;
  tools?: Array<{ name: string; description?: string; input_schema: unknown; cache_control?: CacheControl }>;
  tool_choice?: {
    type: "auto" | "any" | "none" | "tool";
    name?: string;
    disable_parallel_tool_use?: boolean;
  };
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  stream?: boolean;
  metadata?: { user_id: string };
}

type Json = Record<string, unknown>;

/** 400 for a chat request the Messages API cannot express. */
const refuse = (message: string, param: string) =>
  new GatewayError(400, message, { type: "invalid_request_error", param });

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `data:<media type>;base64,<data>` */
const dataUrl = /^data:([^;,]+);base64,(.*)$/s;

/** A `cache_control` object of a part, message or tool; undefined when absent (anything but an object). */
const cacheControlOf = (holder: Json): CacheControl | undefined =>
  isObject(holder.cache_control) ? holder.cache_control : undefined;

/** `blocks` with `cacheControl` (a message's) set on the last one; unchanged without one. */
function markLast<B extends { cache_control?: CacheControl }>(
  blocks: B[],
  cacheControl: CacheControl | undefined,
): B[] {
  const last = blocks[blocks.length - 1];
  if (cacheControl !== undefined && last !== undefined) last.cache_control = cacheControl;
  return blocks;
}

/** One chat content part → an Anthropic block, with the part's `cache_control`. */
function partBlock(part: unknown, param: string): AnthropicBlock | undefined {
  if (!isObject(part)) throw refuse("A content part must be an object.", param);
  const block = partContent(part, param);
  const cacheControl = cacheControlOf(part);
  if (block !== undefined && cacheControl !== undefined) block.cache_control = cacheControl;
  return block;
}

/** One chat content part (an object) → an Anthropic block without its breakpoint. */
function partContent(part: Json, param: string): AnthropicBlock | undefined {
  if (part.type === "text" || part.type === "refusal") {
    const text = part.type === "text" ? part.text : part.refusal;
    if (typeof text !== "string") throw refuse(`A ${part.type} part needs a string.`, param);
    return text === "" ? undefined : { type: "text", text };
  }
  if (part.type === "image_url") {
    const url = isObject(part.image_url) ? part.image_url.url : undefined;
    if (typeof url !== "string") throw refuse("An image_url part needs image_url.url.", param);
    const data = dataUrl.exec(url);
    if (data !== null) {
      return { type: "image", source: { type: "base64", media_type: data[1] ?? "", data: data[2] ?? "" } };
    }
    if (/^https?:\/\//i.test(url)) return { type: "image", source: { type: "url", url } };
    throw refuse("An image_url must be a data: URL (base64) or an http(s) URL.", param);
  }
  throw refuse(
    `Content parts of type ${JSON.stringify(part.type)} cannot be sent to an Anthropic model (text and image_url can).`,
    param,
  );
}

/** A chat message's `content` (a string or parts) → blocks; empty texts are left out. */
function contentBlocks(content: unknown, param: string): AnthropicBlock[] {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw refuse("content must be a string or an array of parts.", param);
  const blocks: AnthropicBlock[] = [];
  content.forEach((part, i) => {
    const block = partBlock(part, `${param}[${i}]`);
    if (block !== undefined) blocks.push(block);
  });
  return blocks;
}

/** Text only (system prompts, tool results): image parts are refused there. */
function textBlocks(
  content: unknown,
  param: string,
): Array<{ type: "text"; text: string; cache_control?: CacheControl }> {
  const blocks = contentBlocks(content, param);
  for (const block of blocks) {
    if (block.type !== "text") throw refuse("Only text can be given here.", param);
  }
  return blocks as Array<{ type: "text"; text: string }>;
}

/** An assistant's `tool_calls` → `tool_use` blocks. */
function toolUses(calls: unknown, param: string): AnthropicBlock[] {
  if (calls === undefined || calls === null) return [];
  if (!Array.isArray(calls)) throw refuse("tool_calls must be an array.", param);
  return calls.map((call, i) => {
    const fn = isObject(call) && isObject(call.function) ? call.function : undefined;
    if (!isObject(call) || typeof call.id !== "string" || typeof fn?.name !== "string") {
      throw refuse("A tool call needs an id and function.name.", `${param}[${i}]`);
    }
    let input: unknown = {};
    const args = fn.arguments;
    if (typeof args === "string" && args.trim() !== "") {
      try {
        input = JSON.parse(args);
      } catch {
        throw refuse("A tool call's function.arguments must be a JSON object.", `${param}[${i}]`);
      }
    }
    return { type: "tool_use", id: call.id, name: fn.name, input };
  });
}

/** Appends blocks as a turn of `role`, merged into the last turn when that has the same role. */
function pushTurn(messages: AnthropicMessage[], role: "user" | "assistant", blocks: AnthropicBlock[]): void {
  if (blocks.length === 0) return;
  const last = messages[messages.length - 1];
  if (last?.role === role) last.content.push(...blocks);
  else messages.push({ role, content: blocks });
}

function translateTools(tools: unknown): AnthropicRequest["tools"] {
  if (!Array.isArray(tools)) throw refuse("tools must be an array.", "tools");
  return tools.map((tool, i) => {
    const fn = isObject(tool) && isObject(tool.function) ? tool.function : undefined;
    if (!isObject(tool) || tool.type !== "function" || typeof fn?.name !== "string") {
      throw refuse(
        'Anthropic models take function tools only ({type: "function", function: {name}}).',
        `tools[${i}]`,
      );
    }
    const cacheControl = cacheControlOf(tool) ?? cacheControlOf(fn);
    return {
      name: fn.name,
      ...(typeof fn.description === "string" ? { description: fn.description } : {}),
      input_schema: isObject(fn.parameters) ? fn.parameters : { type: "object", properties: {} },
      ...(cacheControl === undefined ? {} : { cache_control: cacheControl }),
    };
  });
}

function translateToolChoice(choice: unknown, parallel: unknown): AnthropicRequest["tool_choice"] {
  let out: NonNullable<AnthropicRequest["tool_choice"]>;
  if (choice === "auto" || choice === undefined) out = { type: "auto" };
  else if (choice === "none") return { type: "none" };
  else if (choice === "required") out = { type: "any" };
  else if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === "string") {
    out = { type: "tool", name: choice.function.name };
  } else throw refuse("tool_choice must be auto, none, required or a named function.", "tool_choice");
  if (parallel === false) out.disable_parallel_tool_use = true;
  return out;
}

/**
 * Translates a chat completions body (already validated by the endpoint's schema; `model` is the upstream
 * model) into a Messages body.
 * @throws GatewayError 400 `invalid_request_error` for what Anthropic cannot take: content parts other than
 *   text and images, an image URL that is neither `data:` nor http(s), non-function tools, `n` > 1, tool call
 *   arguments that are not JSON, a conversation without a user or assistant message.
 * @param defaultMaxTokens `max_tokens` when the body sets no cap (tokens): the deployment's
 *   `model_info.max_output_tokens`, else {@link DEFAULT_MAX_OUTPUT_TOKENS}.
 */
export function toAnthropicRequest(
  chat: Json,
  defaultMaxTokens: number = DEFAULT_MAX_OUTPUT_TOKENS,
): AnthropicRequest {
  if (typeof chat.n === "number" && chat.n > 1) {
    throw refuse("Anthropic models answer with one choice: n must be 1.", "n");
  }
  if (!Array.isArray(chat.messages)) throw refuse("messages must be an array.", "messages");
  const system: Array<{ type: "text"; text: string }> = [];
  const messages: AnthropicMessage[] = [];
  chat.messages.forEach((message, i) => {
    const param = `messages[${i}]`;
    if (!isObject(message)) throw refuse("A message must be an object.", param);
    const cacheControl = cacheControlOf(message);
    switch (message.role) {
      case "system":
      case "developer":
        system.push(...markLast(textBlocks(message.content, `${param}.content`), cacheControl));
        break;
      case "user":
        pushTurn(
          messages,
          "user",
          markLast(contentBlocks(message.content, `${param}.content`), cacheControl),
        );
        break;
      case "assistant":
        pushTurn(
          messages,
          "assistant",
          markLast(
            [
              ...contentBlocks(message.content, `${param}.content`),
              ...toolUses(message.tool_calls, `${param}.tool_calls`),
            ],
            cacheControl,
          ),
        );
        break;
      case "tool": {
        if (typeof message.tool_call_id !== "string")
          throw refuse("A tool message needs tool_call_id.", param);
        const text = textBlocks(message.content, `${param}.content`);
        pushTurn(
          messages,
          "user",
          markLast<AnthropicBlock>(
            [
              {
                type: "tool_result",
                tool_use_id: message.tool_call_id,
                content: text.length === 0 ? "" : text,
              },
            ],
            cacheControl,
          ),
        );
        break;
      }
      default:
        throw refuse(
          `Messages of role ${JSON.stringify(message.role)} cannot be sent to an Anthropic model.`,
          `${param}.role`,
        );
    }
  });
  if (messages.length === 0) {
    throw refuse("An Anthropic model needs at least one user or assistant message.", "messages");
  }
  const maxTokens = chat.max_completion_tokens ?? chat.max_tokens;
  const out: AnthropicRequest = {
    model: String(chat.model),
    max_tokens: typeof maxTokens === "number" && maxTokens > 0 ? maxTokens : defaultMaxTokens,
    messages,
  };
  if (system.length > 0) out.system = system;
  const hasTools = Array.isArray(chat.tools) && chat.tools.length > 0;
  if (hasTools) {
    out.tools = translateTools(chat.tools);
    out.tool_choice = translateToolChoice(chat.tool_choice, chat.parallel_tool_calls);
  }
  if (typeof chat.temperature === "number") out.temperature = chat.temperature;
  if (typeof chat.top_p === "number") out.top_p = chat.top_p;
  if (typeof chat.stop === "string") out.stop_sequences = [chat.stop];
  else if (Array.isArray(chat.stop) && chat.stop.length > 0) out.stop_sequences = chat.stop.map(String);
  if (typeof chat.user === "string" && chat.user !== "") out.metadata = { user_id: chat.user };
  if (chat.stream === true) out.stream = true;
  return out;
}
