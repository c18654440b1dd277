/**
 * The upstream request body made from the client's own JSON text instead of serialising the parsed body again:
 * the text is sent as it came, with the top-level `model` value replaced by the deployment's model name (when
 * it differs) and, for a stream that did not ask for usage, `"stream_options":{"include_usage":true}` added as
 * the object's last member. A 1 MB prompt is then never copied or escaped again.
 *
 * The text is only reused when it says exactly what the parsed body says: no key repeated anywhere (a parser
 * that keeps the first of two keys would read something else than the gateway checked, e.g. an unmasked
 * message), `model` given once at the top level as a plain string, and nothing for the gateway to change but
 * `model` and that member. Otherwise {@link forwardable} answers undefined and the body is serialised.
 */
import type { JsonText } from "../../plugins/json-body.js";

/** The parsed body the text must agree with: its `model`, and `stream_options` for a stream. */
export interface ForwardedBody {
  model: string;
  stream_options?: { include_usage?: boolean | null | undefined } | null | undefined;
  [field: string]: unknown;
}

/** The client's JSON text and where its top-level `model` value and closing brace are. */
export interface ForwardableJson {
  readonly text: string;
  /** The client's `model`. */
  readonly model: string;
  /** Span of the top-level `model` value (its string token, quotes included): [start, end). */
  readonly modelStart: number;
  readonly modelEnd: number;
  /** Index of the top-level object's closing brace. */
  readonly close: number;
  /** Members added before the closing brace (`,"stream_options":…`), or "". */
  readonly append: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** JSON whitespace: space, tab, line feed, carriage return. */
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** Index of the quote closing the string token that opens at `open`, or -1. Native search, quote to quote. */
function stringEnd(text: string, open: number): number {
  let at = open + 1;
  for (;;) {
    at = text.indexOf('"', at);
    if (at < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(at - 1 - slashes) === BACKSLASH) slashes++;
    if ((slashes & 1) === 0) return at;
    at++;
  }
}

/** Where {@link scanJson} found the parts the splice needs. */
export interface JsonLayout {
  /** Object members in the text (keys). */
  members: number;
  modelStart: number;
  modelEnd: number;
  close: number;
}

/**
 * Finds, in JSON text that parsed as an object, its members, the span of the top-level `model` value and the
 * closing brace. Strings are skipped with `indexOf`, so the cost follows the number of tokens, not the prompt's
 * length. Undefined when the top-level `model` is missing, repeated or not a string, or a top-level key is
 * written with escapes (it might spell `model`).
 */
export function scanJson(text: string): JsonLayout | undefined {
  let depth = 0;
  let members = 0;
  let modelStart = -1;
  let modelEnd = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) return undefined;
      let next = end + 1;
      while (isSpace(text.charCodeAt(next))) next++;
      if (text.charCodeAt(next) !== COLON) {
        i = end;
        continue;
      }
      members++;
      if (depth === 1) {
        for (let k = i + 1; k < end; k++) if (text.charCodeAt(k) === BACKSLASH) return undefined;
        if (end - i === 6 && text.startsWith("model", i + 1)) {
          if (modelStart >= 0) return undefined;
          let value = next + 1;
          while (isSpace(text.charCodeAt(value))) value++;
          if (text.charCodeAt(value) !== QUOTE) return undefined;
          const valueEnd = stringEnd(text, value);
          if (valueEnd < 0) return undefined;
          modelStart = value;
          modelEnd = valueEnd + 1;
          i = valueEnd;
          continue;
        }
      }
      i = next; // past the colon with the loop's increment
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) {
        if (modelStart < 0) return undefined;
        return { members, modelStart, modelEnd, close: i };
      }
    }
  }
  return undefined;
}

/** The member a stream gets so that the upstream reports usage (the answer step hides it again). */
const INCLUDE_USAGE = ',"stream_options":{"include_usage":true}';

/** A member the gateway adds to the client's body, e.g. an output cap: its name and its value. */
export interface AddedMember {
  name: string;
  value: number;
}

/**
 * The client's text, ready for {@link upstreamJson}, when it can be sent in place of the serialised `body`
 * (see the module comment); undefined when the body must be serialised. `stream`: the call streams, so the
 * upstream must be asked for usage. `added`: a member the gateway adds to the body, e.g. an output cap; a body
 * that already has a member of that name (`null`, say) is serialised instead, so that no name is given twice.
 */
export function forwardable(
  json: JsonText,
  body: ForwardedBody,
  stream: boolean,
  added?: AddedMember,
): ForwardableJson | undefined {
  if ("tags" in body) return undefined; // the router drops LiteLLM's routing field
  if (json.text.charCodeAt(0) === 0xfeff) return undefined; // a byte order mark many JSON parsers refuse
  if (added !== undefined && added.name in body) return undefined;
  let append = added === undefined ? "" : `,${JSON.stringify(added.name)}:${JSON.stringify(added.value)}`;
  if (stream && body.stream_options?.include_usage !== true) {
    if (body.stream_options !== undefined) return undefined; // an object (or null) to merge into
    append += INCLUDE_USAGE;
  }
  const layout = scanJson(json.text);
  if (layout === undefined || layout.members !== json.members) return undefined;
  return {
    text: json.text,
    model: body.model,
    modelStart: layout.modelStart,
    modelEnd: layout.modelEnd,
    close: layout.close,
    append,
  };
}

/** The upstream body for a deployment's `model`: the client's text itself when nothing changes. */
export function upstreamJson(json: ForwardableJson, model: string): string {
  const { text } = json;
  if (model === json.model && json.append === "") return text;
  const head =
    model === json.model
      ? text.slice(0, json.close)
      : `${text.slice(0, json.modelStart)}${JSON.stringify(model)}${text.slice(json.modelEnd, json.close)}`;
  return `${head}${json.append}${text.slice(json.close)}`;
}
