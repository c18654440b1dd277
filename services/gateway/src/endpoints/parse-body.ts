/**
 * Validation of a request body against an endpoint's zod schema, with OpenAI-style 400s: the first invalid
 * field in `param` and a sentence naming it (`Invalid request: input is required.`). Shared by every endpoint's
 * schema.
 */
import type { z } from "zod";
import { invalidRequest } from "../errors/gateway-error.js";

/** `messages.0.role` → `messages[0].role`, as OpenAI names a `param`. */
export function paramName(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (out, part) =>
      typeof part === "number" ? `${out}[${part}]` : out ? `${out}.${String(part)}` : String(part),
    "",
  );
}

const article: Record<string, string> = { int: "an integer", array: "an array", object: "an object" };

/** A readable sentence for one zod issue, e.g. "is required", "must be a number", "must be at most 2". */
export function describe(issue: z.core.$ZodIssue): string {
  if (issue.input === undefined) return "is required";
  switch (issue.code) {
    case "invalid_type":
      return `must be ${article[issue.expected] ?? `a ${issue.expected}`}`;
    case "too_small":
      return issue.origin === "array" || issue.origin === "string"
        ? "must not be empty"
        : `must be at least ${String(issue.minimum)}`;
    case "too_big":
      return `must be at most ${String(issue.maximum)}`;
    case "invalid_union":
      return "has the wrong type";
    default:
      return issue.message.toLowerCase();
  }
}

/**
 * Validates `body` with `schema`; returns the schema's copy.
 * @param what the fields a body needs, for the message when it is no JSON object, e.g. `model and input`.
 * @param shapes per field whose value is a union of shapes: the sentence for a value of none of them.
 * @throws GatewayError 400 `invalid_request_error` naming the first invalid field.
 */
export function parseBody<T>(
  schema: z.ZodType<T>,
  body: unknown,
  what: string,
  shapes: Readonly<Record<string, string>> = {},
): T {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidRequest(`The request body must be a JSON object with ${what}.`);
  }
  const parsed = schema.safeParse(body, { reportInput: true });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const param = paramName(issue.path) || null;
  const shape = param === null ? undefined : shapes[param];
  const reason =
    shape !== undefined && issue.code === "invalid_union" && issue.input !== undefined
      ? shape
      : describe(issue);
  throw invalidRequest(`Invalid request: ${param ?? "body"} ${reason}.`, param);
}
