/**
 * Translates a Responses API request (OpenAI API reference, `CreateResponse`) into a chat completions request
 * (`CreateChatCompletionRequest`), for deployments that do not serve `/responses` natively (vLLM, llama.cpp,
 * Anthropic through its OpenAI compatibility endpoint):
 *
 * - `instructions` → a leading `system` message; `input` as a string → one `user` message;
 * - message items → messages with the same role (`developer` kept; content parts `input_text` / `output_text` →
 *   `text` parts, `input_image` → `image_url` parts); consecutive `function_call` items → one assistant message
 *   with `tool_calls`; `function_call_output` → a `tool` message;
 * - flat function tools `{type:"function", name, description, parameters, strict}` → `{type:"function",
 *   function:{…}}`; `tool_choice` `{type:"function", name}` → `{type:"function", function:{name}}`;
 * - `max_output_tokens` → `max_completion_tokens`; `text.format` → `response_format`; `temperature`, `top_p`,
 *   `parallel_tool_calls`, `metadata`, `user` and `stream` as they are (a stream asks for usage).
 *
 * Items of other types (reasoning, web search calls, …) and tools other than functions have no chat equivalent:
 * {@link toChatRequest} refuses them with a 400 naming the field rather than dropping them silently.
 */
import { invalidRequest } from "../../errors/gateway-error.js";
import type { ResponsesRequest } from "./schema.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** One chat content part for one Responses input part. */
function chatPart(part: Obj, at: string): Obj {
  switch (part.type) {
    case "input_text":
    case "output_text":
    case "refusal":
      return { type: "text", text: String(part.text ?? part.refusal ?? "") };
    case "input_image": {
      const url = part.image_url;
      if (typeof url !== "string") {
        throw invalidRequest(
          `${at}.image_url is required: this model is served through chat completions, which takes images by URL (file_id is not supported).`,
          `${at}.image_url`,
        );
      }
      return {
        type: "image_url",
        image_url: { url, ...(part.detail === undefined ? {} : { detail: part.detail }) },
      };
    }
    default:
      throw invalidRequest(
        `${at}.type "${String(part.type)}" is not supported for this model (it is served through chat completions); use input_text or input_image.`,
        `${at}.type`,
      );
  }
}

/** A message item's chat `content`: a string as it is, parts translated (all-text parts of an assistant joined). */
function chatContent(content: unknown, at: string): unknown {
  if (!Array.isArray(content)) return content ?? "";
  return content.map((p, j) => chatPart(isObj(p) ? p : {}, `${at}.content[${j}]`));
}

/** The chat messages for `instructions` and `input`. */
function chatMessages(body: ResponsesRequest): Obj[] {
  const messages: Obj[] = [];
  if (typeof body.instructions === "string" && body.instructions !== "") {
    messages.push({ role: "system", content: body.instructions });
  }
  const input = body.input;
  if (typeof input === "string") {
    messages.push({ role: "user", content: input });
    return messages;
  }
  let calls: Obj[] | undefined;
  for (let i = 0; i < (input?.length ?? 0); i++) {
    const item = input![i] as Obj;
    const at = `input[${i}]`;
    const type = item.type ?? "message";
    if (type === "function_call") {
      const call = {
        id: item.call_id,
        type: "function",
        function: { name: item.name, arguments: item.arguments ?? "" },
      };
      if (calls === undefined) {
        calls = [call];
        messages.push({ role: "assistant", content: null, tool_calls: calls });
      } else {
        calls.push(call);
      }
      continue;
    }
    calls = undefined;
    if (type === "function_call_output") {
      const output = typeof item.output === "string" ? item.output : JSON.stringify(item.output ?? "");
      messages.push({ role: "tool", tool_call_id: item.call_id, content: output });
    } else if (type === "message") {
      if (item.role === undefined) throw invalidRequest(`${at}.role is required.`, `${at}.role`);
      messages.push({ role: item.role, content: chatContent(item.content, at) });
    } else {
      throw invalidRequest(
        `${at}.type "${String(type)}" is not supported for this model (it is served through chat completions); send message, function_call and function_call_output items.`,
        `${at}.type`,
      );
    }
  }
  return messages;
}

/** Flat Responses function tools as chat tools. */
function chatTools(tools: NonNullable<ResponsesRequest["tools"]>): Obj[] {
  return tools.map((tool, i) => {
    if (tool.type !== "function" || typeof tool.name !== "string") {
      throw invalidRequest(
        `tools[${i}]: only function tools ({type: "function", name, parameters}) are supported for this model (it is served through chat completions).`,
        `tools[${i}].type`,
      );
    }
    const fn: Obj = { name: tool.name };
    if (tool.description != null) fn.description = tool.description;
    if (tool.parameters != null) fn.parameters = tool.parameters;
    if (tool.strict != null) fn.strict = tool.strict;
    return { type: "function", function: fn };
  });
}

/** `text.format` (`{type:"json_schema", name, schema, strict}`) as chat's `response_format`. */
function responseFormat(format: Obj): Obj {
  if (format.type !== "json_schema") return { type: format.type };
  const { type: _type, ...schema } = format;
  return { type: "json_schema", json_schema: schema };
}

/**
 * The chat completions body for a Responses request (see the module comment); `model` is the client's alias
 * (the router replaces it per deployment).
 * @throws GatewayError 400 `invalid_request_error` for an input item, content part or tool chat cannot carry.
 */
export function toChatRequest(body: ResponsesRequest, stream: boolean): Obj {
  const chat: Obj = { model: body.model, messages: chatMessages(body) };
  if (body.tools !== undefined && body.tools.length > 0) chat.tools = chatTools(body.tools);
  const choice = body.tool_choice;
  if (choice !== undefined) {
    chat.tool_choice =
      typeof choice === "string" || choice.type !== "function"
        ? choice
        : { type: "function", function: { name: choice.name } };
  }
  if (body.max_output_tokens != null) chat.max_completion_tokens = body.max_output_tokens;
  for (const key of ["temperature", "top_p", "parallel_tool_calls", "metadata", "user"] as const) {
    if (body[key] != null) chat[key] = body[key];
  }
  const format = body.text?.format;
  if (format !== undefined && format.type !== "text") chat.response_format = responseFormat(format);
  if (stream) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}
