/**
 * The Responses API's `response` object (OpenAI API reference, schema `Response`) as the gateway builds it when it
 * answers a Responses request through chat completions: from a `chat.completion` ({@link fromChatCompletion})
 * and, event by event, from a chat stream (`stream-encoder.ts`, which shares {@link responseShell} and
 * {@link responseUsage}).
 *
 * Ids: `resp_…` for the response, `msg_…` for its message item, `fc_…` for a function call item (its `call_id`
 * is the chat tool call's `id`). The gateway stores nothing: `store` is not echoed and `previous_response_id` is
 * always null on this path.
 */
import { randomBytes } from "node:crypto";
import { openAiUsage } from "../../usage/provider-usage.js";
import type { Usage } from "../../usage/types.js";
import type { ResponsesRequest } from "./schema.js";

type Obj = Record<string, unknown>;

/** A fresh id with OpenAI's prefix, e.g. `resp_6f1c…` (24 random bytes, hex). */
export const newId = (prefix: "resp" | "msg" | "fc"): string =>
  `${prefix}_${randomBytes(24).toString("hex")}`;

/** The `response` object's fields that echo the request, with `status` and an empty `output`. */
export function responseShell(
  body: ResponsesRequest,
  id: string,
  createdAt: number,
  model: string,
  status: "in_progress" | "completed" | "incomplete" | "failed",
): Obj {
  return {
    id,
    object: "response",
    created_at: createdAt,
    status,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    temperature: body.temperature ?? null,
    text: body.text ?? { format: { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    top_p: body.top_p ?? null,
    truncation: "disabled",
    metadata: body.metadata ?? {},
  };
}

/**
 * Usage (tokens; a chat `usage` as the upstream sent it is read by `openAiUsage` first) in the Responses API's
 * names, with the detail objects its schema requires (OpenAI API reference, `ResponseUsage`): cache reads as
 * `cached_tokens`, cache writes as `cache_write_tokens`, reasoning as `reasoning_tokens`.
 */
export function responseUsage(usage: Usage | undefined): Obj {
  const input = usage?.prompt_tokens ?? 0;
  const output = usage?.completion_tokens ?? 0;
  const b = usage?.breakdown;
  return {
    input_tokens: input,
    input_tokens_details: {
      cached_tokens: b?.cache_read ?? 0,
      cache_write_tokens: b === undefined ? 0 : b.cache_write_5m + b.cache_write_1h,
    },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: b?.output_reasoning ?? 0 },
    total_tokens: usage?.total_tokens ?? input + output,
  };
}

/** A message output item holding one `output_text` part. */
export const messageItem = (id: string, text: string, status: string): Obj => ({
  id,
  type: "message",
  role: "assistant",
  status,
  content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
});

/** A function call output item. */
export const functionCallItem = (
  id: string,
  callId: string,
  name: string,
  args: string,
  status: string,
): Obj => ({
  id,
  type: "function_call",
  call_id: callId,
  name,
  arguments: args,
  status,
});

/** `incomplete_details` for a chat `finish_reason`: `length` → max_output_tokens, `content_filter` → itself. */
export function incompleteReason(finishReason: unknown): "max_output_tokens" | "content_filter" | undefined {
  if (finishReason === "length") return "max_output_tokens";
  if (finishReason === "content_filter") return "content_filter";
  return undefined;
}

interface ChatMessage {
  content?: string | null;
  refusal?: string | null;
  tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }>;
}

/**
 * The `response` object for a `chat.completion` (its first choice): the message's text as one `output_text`
 * part, each tool call as a `function_call` item; `status` `incomplete` with `incomplete_details` when the chat
 * stopped at its token cap (`finish_reason: "length"`) or a content filter.
 */
export function fromChatCompletion(body: ResponsesRequest, completion: Obj): Obj {
  const choice = (
    completion.choices as Array<{ message?: ChatMessage; finish_reason?: unknown }> | undefined
  )?.[0];
  const message = choice?.message ?? {};
  const reason = incompleteReason(choice?.finish_reason);
  const status = reason === undefined ? "completed" : "incomplete";
  const created = typeof completion.created === "number" ? completion.created : Math.floor(Date.now() / 1000);
  const model = typeof completion.model === "string" ? completion.model : body.model;
  const response = responseShell(body, newId("resp"), created, model, status);
  const output: Obj[] = [];
  const text = message.content ?? message.refusal;
  if (typeof text === "string" && text !== "") output.push(messageItem(newId("msg"), text, status));
  for (const call of message.tool_calls ?? []) {
    output.push(
      functionCallItem(
        newId("fc"),
        call.id ?? newId("fc"),
        call.function?.name ?? "",
        call.function?.arguments ?? "",
        "completed",
      ),
    );
  }
  response.output = output;
  if (reason !== undefined) response.incomplete_details = { reason };
  response.usage = responseUsage(openAiUsage(completion.usage));
  return response;
}
