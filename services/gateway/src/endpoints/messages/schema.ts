/**
 * The Messages request (Anthropic API reference, "Messages": `POST /v1/messages`), validated before anything
 * else happens. Fields the gateway reads or translates are typed; every other field (`thinking`,
 * `service_tier`, `container`, …) passes through to a native upstream unchanged.
 */
import { z } from "zod";
import { invalidRequest } from "../../errors/gateway-error.js";
import { describe, paramName } from "../parse-body.js";

/** A content block (`text`, `image`, `document`, `tool_use`, `tool_result`, `thinking`, …): its `type` is checked. */
const block = z.looseObject({ type: z.string().min(1) });

const textBlock = z.looseObject({ type: z.literal("text"), text: z.string() });

const message = z.looseObject({
  role: z.enum(["user", "assistant"]),
  content: z.union([z.string(), z.array(block)]),
});

const tool = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.looseObject({}).optional(),
});

const toolChoice = z.looseObject({
  type: z.enum(["auto", "any", "tool", "none"]),
  name: z.string().optional(),
  disable_parallel_tool_use: z.boolean().optional(),
});

export const messagesRequestSchema = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  messages: z.array(message).min(1),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  tools: z.array(tool).optional(),
  tool_choice: toolChoice.optional(),
  stream: z.boolean().optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().nonnegative().optional(),
  stop_sequences: z.array(z.string()).optional(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).optional(),
});

/** A validated Messages request. */
export type MessagesRequest = z.infer<typeof messagesRequestSchema>;
/** One message of a Messages request. */
export type MessageParam = MessagesRequest["messages"][number];

/** `POST /v1/messages/count_tokens` takes the same fields but `max_tokens`, `stream`, sampling settings. */
export const countTokensSchema = messagesRequestSchema.extend({
  max_tokens: z.number().int().positive().optional(),
});

/**
 * Validates a parsed JSON body against `schema`. The result is zod's copy (objects down to the content blocks),
 * so a guard may rewrite texts without touching the client's body.
 * @throws GatewayError 400 `invalid_request_error` naming the first invalid field, e.g. `messages[0].role`.
 */
function parseWith<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidRequest("The request body must be a JSON object with model, max_tokens and messages.");
  }
  const parsed = schema.safeParse(body, { reportInput: true });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const param = paramName(issue.path) || null;
  throw invalidRequest(`Invalid request: ${param ?? "body"} ${describe(issue)}.`, param);
}

/**
 * Validates a Messages request body.
 * @throws GatewayError 400 `invalid_request_error` naming the first invalid field.
 */
export const parseMessagesRequest = (body: unknown): MessagesRequest =>
  parseWith(messagesRequestSchema, body);

/**
 * Validates a count_tokens request body (`max_tokens` optional).
 * @throws GatewayError 400 `invalid_request_error` naming the first invalid field.
 */
export const parseCountTokensRequest = (body: unknown): MessagesRequest =>
  parseWith(countTokensSchema, body) as MessagesRequest;
