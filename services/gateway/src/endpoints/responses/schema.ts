/**
 * The Responses API request, validated before anything else happens (OpenAI API reference, "Create a model
 * response", schema `CreateResponse`). Fields the gateway acts on or translates are typed; every other field
 * (`reasoning`, `truncation`, `include`, `user`, …) passes through unchanged to an upstream that serves the
 * Responses API natively (on the translation path only what {@link ../to-chat} maps is sent).
 */
import { z } from "zod";
import { invalidRequest } from "../../errors/gateway-error.js";

const inputPart = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
});

/** A message item (`{role, content}`, `type` optional) or any other item (`function_call`, `function_call_output`, …). */
const inputItem = z.looseObject({
  type: z.string().optional(),
  role: z.enum(["user", "assistant", "system", "developer"]).optional(),
  content: z.union([z.string(), z.array(inputPart)]).optional(),
  call_id: z.string().optional(),
  name: z.string().optional(),
  arguments: z.string().optional(),
  output: z.union([z.string(), z.array(z.unknown())]).optional(),
});

const tool = z.looseObject({
  type: z.string(),
  name: z.string().optional(),
  description: z.string().nullish(),
  parameters: z.looseObject({}).nullish(),
  strict: z.boolean().nullish(),
});

export const responsesRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(inputItem)]).optional(),
  instructions: z.string().nullish(),
  tools: z.array(tool).optional(),
  tool_choice: z.union([z.string(), z.looseObject({ type: z.string() })]).optional(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  previous_response_id: z.string().nullish(),
  text: z.looseObject({ format: z.looseObject({ type: z.string() }).optional() }).nullish(),
});

/** A validated Responses API request. */
export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;

/** `input.0.content` → `input[0].content`, as OpenAI names a `param`. */
const paramName = (path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (out, part) =>
      typeof part === "number" ? `${out}[${part}]` : out ? `${out}.${String(part)}` : String(part),
    "",
  );

/**
 * The most specific issue under a union's failure (`input` is a string or items: an item's bad `role` is what
 * to name), with its path from the body's root.
 */
function deepest(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return issue;
  let best: z.core.$ZodIssue | undefined;
  for (const branch of issue.errors) {
    const first = branch[0];
    if (first !== undefined && (best === undefined || first.path.length > best.path.length)) best = first;
  }
  if (best === undefined || best.path.length === 0) return issue;
  return deepest({ ...best, path: [...issue.path, ...best.path] } as z.core.$ZodIssue);
}

/**
 * Validates a parsed JSON body; the result is the schema's copy (a guard may rewrite its texts without touching
 * the client's body).
 * @throws GatewayError 400 `invalid_request_error` naming the first invalid field in `param` and the message.
 */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidRequest("The request body must be a JSON object with model and input.");
  }
  const parsed = responsesRequestSchema.safeParse(body, { reportInput: true });
  if (parsed.success) return parsed.data;
  const issue = deepest(parsed.error.issues[0]!);
  const param = paramName(issue.path) || null;
  const what = issue.input === undefined ? "is required" : issue.message.toLowerCase();
  throw invalidRequest(`Invalid request: ${param ?? "body"} ${what}.`, param);
}
