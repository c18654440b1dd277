/**
 * The app's JSON body parser: fastify's own (secure-json-parse: `__proto__` refused, `constructor` ignored),
 * followed by a nesting-depth check of what it parsed. A body nested thousands of levels deep parses (V8's
 * JSON.parse is iterative), but every later
 * recursive walk of it (JSON.stringify of the upstream request, a guardrail, a log serializer) overflows the
 * stack: such a body is refused here, once, as a 400 naming the limit, before any route sees it.
 *
 * Bodies of any content type but `text/plain` (which fastify keeps as a string) are parsed as JSON: clients
 * such as `curl -d` send JSON as `application/x-www-form-urlencoded`. A request to a route the gateway does not
 * serve is not parsed at all (`request.is404`), so it gets the JSON 404 whatever it carries (a
 * `multipart/form-data` upload to `/v1/files` or `/v1/audio/transcriptions`), not a 400 for its body.
 */
import type { FastifyInstance } from "fastify";
import { GatewayError } from "../errors/gateway-error.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The JSON body as the client sent it, once parsed by this parser. */
    jsonText: JsonText | undefined;
  }
}

/** A request's JSON body as text, with what its parse found. */
export interface JsonText {
  /** The body exactly as received (decoded as UTF-8). */
  text: string;
  /**
   * Object members in the parsed value. Fewer than the text holds means the text repeats a key (the parse kept
   * the last), so the text says something the parsed body does not: it must not be forwarded as it is.
   */
  members: number;
}

/** Deepest nesting of arrays and objects accepted in a request body. OpenAI bodies need well under 20. */
export const MAX_JSON_DEPTH = 64;

/**
 * The number of object members in `value` (parsed JSON), or -1 when it nests arrays/objects deeper than
 * `maxDepth`. Walks the parsed structure with an explicit stack, so its cost follows the number of arrays and
 * objects, not the body's characters (a 1 MB prompt is one string), and a 100,000-level body cannot overflow
 * the stack. Stops at the first level too deep.
 */
export function countMembers(value: unknown, maxDepth: number): number {
  if (typeof value !== "object" || value === null) return 0;
  const pending: Array<{ node: object; depth: number }> = [{ node: value, depth: 1 }];
  let members = 0;
  while (pending.length > 0) {
    const { node, depth } = pending.pop() as { node: object; depth: number };
    if (depth > maxDepth) return -1;
    const isArray = Array.isArray(node);
    const children = isArray ? node : Object.values(node);
    if (!isArray) members += children.length;
    for (const child of children) {
      if (typeof child === "object" && child !== null) pending.push({ node: child, depth: depth + 1 });
    }
  }
  return members;
}

/** True when `value` (parsed JSON) nests arrays/objects deeper than `maxDepth` (see {@link countMembers}). */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  return countMembers(value, maxDepth) < 0;
}

/** 400 for a body nested deeper than {@link MAX_JSON_DEPTH}. */
export function tooDeep(): GatewayError {
  return new GatewayError(
    400,
    `The request body is nested deeper than ${MAX_JSON_DEPTH} levels of arrays/objects; the gateway's limit is ${MAX_JSON_DEPTH}.`,
    { type: "invalid_request_error", code: "json_too_deep" },
  );
}

/**
 * Replaces the app's JSON parser (and adds one for every content type without a parser) with the depth-checked one,
 * which also keeps the body's text on the request (`request.jsonText`). Call before any route is registered.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.decorateRequest("jsonText", undefined);
  const parse = app.getDefaultJsonParser("error", "ignore");
  app.removeContentTypeParser("application/json");
  for (const contentType of ["application/json", "*"]) {
    app.addContentTypeParser(contentType, { parseAs: "string" }, (request, body, done) => {
      if (request.is404) return done(null, undefined);
      parse(request, body as string, (error, value) => {
        if (error) return done(error, undefined);
        const members = countMembers(value, MAX_JSON_DEPTH);
        if (members < 0) return done(tooDeep(), undefined);
        request.jsonText = { text: body as string, members };
        done(null, value);
      });
    });
  }
}
