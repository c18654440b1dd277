/**
 * The app's JSON body parser: fastify's own (secure-json-parse: `__proto__` refused, `constructor` ignored),
 * followed by a nesting-depth check of what it parsed. A body nested thousands of levels deep parses (V8's
 * JSON.parse is iterative), but every later
 * recursive walk of it (JSON.stringify of the upstream request, a guardrail, a log serializer) overflows the
 * stack: such a body is refused here, once, as a 400 naming the limit, before any route sees it.
 *
 * Bodies of any content type but `text/plain` (which fastify keeps as a string) are parsed as JSON: clients
 * such as `curl -d` send JSON as `application/x-www-form-urlencoded`.
 */
import type { FastifyInstance } from "fastify";
import { GatewayError } from "../errors/gateway-error.js";

/** Deepest nesting of arrays and objects accepted in a request body. OpenAI bodies need well under 20. */
export const MAX_JSON_DEPTH = 64;

/**
 * True when `value` (parsed JSON) nests arrays/objects deeper than `maxDepth`. Walks the parsed structure with
 * an explicit stack, so its cost follows the number of arrays and objects, not the body's characters (a 1 MB
 * prompt is one string), and a 100,000-level body cannot overflow the stack. Stops at the first level too deep.
 */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  const pending: Array<{ node: object; depth: number }> = [{ node: value, depth: 1 }];
  while (pending.length > 0) {
    const { node, depth } = pending.pop() as { node: object; depth: number };
    if (depth > maxDepth) return true;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (typeof child === "object" && child !== null) pending.push({ node: child, depth: depth + 1 });
    }
  }
  return false;
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
 * Replaces the app's JSON parser (and adds one for every content type without a parser) with the depth-checked one.
 * Call before any route is registered.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser("error", "ignore");
  app.removeContentTypeParser("application/json");
  for (const contentType of ["application/json", "*"]) {
    app.addContentTypeParser(contentType, { parseAs: "string" }, (request, body, done) => {
      parse(request, body as string, (error, value) => {
        if (error) done(error, undefined);
        else if (nestsDeeperThan(value, MAX_JSON_DEPTH)) done(tooDeep(), undefined);
        else done(null, value);
      });
    });
  }
}
