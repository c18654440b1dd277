/**
 * The app's JSON body parser: fastify's own (secure-json-parse: `__proto__` refused, `constructor` ignored),
 * preceded by a nesting-depth check. A body nested thousands of levels deep parses, but every later
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

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * The position (UTF-16 index) at which `text` first nests deeper than `maxDepth` arrays/objects, or -1.
 * Brackets inside strings do not count. Linear, no allocation; malformed JSON is left to the parser.
 */
export function excessiveDepthAt(text: string, maxDepth: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      if (depth > maxDepth) return i;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return -1;
}

/** 400 for a body nested deeper than {@link MAX_JSON_DEPTH}. */
export function tooDeep(position: number): GatewayError {
  return new GatewayError(
    400,
    `The request body is nested deeper than ${MAX_JSON_DEPTH} levels of arrays/objects (at character ${position}); the gateway's limit is ${MAX_JSON_DEPTH}.`,
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
      const text = body as string;
      const at = excessiveDepthAt(text, MAX_JSON_DEPTH);
      if (at >= 0) {
        done(tooDeep(at), undefined);
        return;
      }
      parse(request, text, done);
    });
  }
}
