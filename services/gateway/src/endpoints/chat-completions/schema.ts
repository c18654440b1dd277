/**
 * The chat completion request, validated before anything else happens (OpenAI API reference,
 * "Create chat completion"). Fields the gateway acts on are typed; every other OpenAI field
 * (top_p, stop, response_format, seed, user, …) passes through to the upstream unchanged.
 */
import { z } from "zod";
import { invalidRequest } from "../../errors/gateway-error.js";
import { describe, paramName } from "../parse-body.js";

const message = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional(),
});

const tool = z.looseObject({
  type: z.string(),
  function: z.looseObject({ name: z.string() }).optional(),
});

/** The most choices (`n`) one request may ask for (OpenAI API reference: `n`, 1 to 128). */
export const MAX_CHOICES = 128;

export const chatCompletionSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  tools: z.array(tool).optional(),
  tool_choice: z.union([z.string(), z.looseObject({})]).optional(),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().positive().optional(),
  max_completion_tokens: z.number().int().positive().optional(),
  n: z.number().int().min(1).max(MAX_CHOICES).optional(),
});

/** A validated chat completion request. */
export type ChatCompletionRequest = z.infer<typeof chatCompletionSchema>;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const optionalBoolean = (v: unknown) => v === undefined || typeof v === "boolean";
const optionalCount = (v: unknown) => v === undefined || (Number.isSafeInteger(v) && (v as number) > 0);

/** Every element of `messages` is a message the schema accepts. */
function messagesValid(messages: readonly unknown[]): boolean {
  for (const m of messages) {
    if (!isObject(m) || typeof m.role !== "string") return false;
    const c = m.content;
    if (c !== undefined && c !== null && typeof c !== "string" && !Array.isArray(c)) return false;
  }
  return true;
}

function toolsValid(tools: unknown): boolean {
  if (tools === undefined) return true;
  if (!Array.isArray(tools)) return false;
  for (const t of tools) {
    if (!isObject(t) || typeof t.type !== "string") return false;
    if (t.function !== undefined && !(isObject(t.function) && typeof t.function.name === "string"))
      return false;
  }
  return true;
}

/**
 * The hot path's check: true only when {@link chatCompletionSchema} certainly accepts `body`, in plain
 * comparisons (no per-call schema walk, no issue objects). Conservative: whatever it is unsure of (an integer
 * beyond 2^53, say) is left to the schema, which then accepts it or names the field it refuses.
 */
function plainlyValid(body: Obj): boolean {
  const { model, messages, temperature, stream_options: so, tool_choice: choice } = body;
  return (
    typeof model === "string" &&
    model !== "" &&
    Array.isArray(messages) &&
    messages.length > 0 &&
    messagesValid(messages) &&
    optionalBoolean(body.stream) &&
    (so === undefined || so === null || (isObject(so) && optionalBoolean(so.include_usage))) &&
    toolsValid(body.tools) &&
    (choice === undefined || typeof choice === "string" || isObject(choice)) &&
    (temperature === undefined ||
      (typeof temperature === "number" && temperature >= 0 && temperature <= 2)) &&
    optionalCount(body.max_tokens) &&
    optionalCount(body.max_completion_tokens) &&
    optionalCount(body.n) &&
    (body.n === undefined || (body.n as number) <= MAX_CHOICES)
  );
}

/**
 * Validates a parsed JSON body. The result is a copy down to the messages (a guard may rewrite a message's
 * `content` without touching the client's body); content parts, tools and other fields are shared with `body`.
 * A body that passes the plain check costs a few comparisons and the copy; only one that fails it goes through
 * the zod schema, which builds the 400.
 * @throws GatewayError 400 `invalid_request_error` naming the first invalid field in `param` and the message.
 */
export function parseChatCompletion(body: unknown): ChatCompletionRequest {
  if (!isObject(body)) {
    throw invalidRequest("The request body must be a JSON object with model and messages.");
  }
  if (plainlyValid(body)) {
    const messages = body.messages as Obj[];
    const copies = new Array<Obj>(messages.length);
    for (let i = 0; i < messages.length; i++) copies[i] = { ...messages[i] };
    return { ...body, messages: copies } as ChatCompletionRequest;
  }
  return parseWithSchema(body);
}

/**
 * The zod path: the schema's copy of `body`, or the 400 naming the first invalid field.
 * @throws GatewayError 400 `invalid_request_error`.
 */
export function parseWithSchema(body: Obj): ChatCompletionRequest {
  const parsed = chatCompletionSchema.safeParse(body, { reportInput: true });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const param = paramName(issue.path) || null;
  throw invalidRequest(`Invalid request: ${param ?? "body"} ${describe(issue)}.`, param);
}
