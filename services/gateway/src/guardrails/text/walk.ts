/**
 * The walk that finds every text of a request body (or of an answer's part) for the guardrails: every string at any
 * depth, object keys included, is a {@link TextSlot}, unless the endpoint's {@link TextRules} say it is provably not
 * text: a top-level field the gateway never sends upstream (`skip`), an identifier or enum value that has an
 * identifier's shape (`identifiers`, {@link isIdentifier}), or a base64 payload ({@link isBinary}). Fields nobody
 * listed, unknown ones included, are read. The rules also give each slot its scope and group (the
 * prompt-injection guardrail's view: a message's role, tool-call arguments, request-level text).
 *
 * Iterative (a body nested thousands of levels deep does not overflow the stack), in document order, without
 * copying or serialising anything: one pass over the parsed body, a slot per string.
 */
import {
  type Container,
  FieldSlot,
  isTextKey,
  KeySlot,
  REQUEST_SCOPE,
  type TextScope,
  type TextSlot,
} from "./slots.js";

type Obj = Record<string, unknown>;

/**
 * One endpoint's exclusion list and scopes. Every list is short and documented in `docs/guardrails.md`, "What the
 * guardrails read".
 */
export interface TextRules {
  /**
   * Top-level fields not read at all: fields the gateway replaces or removes before the upstream (`model` becomes
   * the deployment's model name; LiteLLM's `tags` are dropped by the router) or that hold token ids (`logit_bias`).
   */
  readonly skip: ReadonlySet<string>;
  /**
   * Fields whose value is an identifier or an enum (`type`, `role`, `id`, `call_id`, a function's `name`,
   * `tool_choice`'s literals, …): a string there is skipped when it has an identifier's shape
   * ({@link isIdentifier}) and read like any other otherwise (an e-mail address or card number never has that
   * shape). `true`: wherever the field is; a set: only in an object that sits under one of those fields (`name`
   * under `function`). For an array of strings the array's field decides (`include: [...]`).
   */
  readonly identifiers: ReadonlyMap<string, true | ReadonlySet<string>>;
  /** Fields that may hold raw base64 (`data`, `file_data`): skipped when the value is base64 ({@link isBinary}). */
  readonly binary: ReadonlySet<string>;
  /**
   * Top-level fields whose elements are one group each (chat `messages`, Responses `input`): the scope of an
   * element. A string in such a field is group 0.
   */
  readonly groups: ReadonlyMap<string, (item: unknown) => TextScope>;
  /** Top-level fields read in a scope other than {@link REQUEST_SCOPE} (`instructions` → `system`); group -1. */
  readonly scopes: ReadonlyMap<string, TextScope>;
  /**
   * A nested field whose subtree is read in another scope than the one around it, given the object holding it
   * (a message's `tool_calls` → `tool_call`); undefined keeps the scope.
   */
  readonly nested?: (holder: Obj, key: string) => TextScope | undefined;
}

/**
 * The `identifiers` of {@link TextRules}: `anywhere` are identifier fields wherever they are; `under` maps a field
 * to the fields it is an identifier under (`{ name: ["function"] }`).
 */
export function identifierFields(
  anywhere: readonly string[],
  under: Readonly<Record<string, readonly string[]>> = {},
): ReadonlyMap<string, true | ReadonlySet<string>> {
  const map = new Map<string, true | ReadonlySet<string>>();
  for (const field of anywhere) map.set(field, true);
  for (const [field, parents] of Object.entries(under)) map.set(field, new Set(parents));
  return map;
}

/** An IBAN's shape (ISO 13616): country code, check digits, 11 to 30 letters and digits. */
const IBAN = /^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/;

/**
 * Whether `value` has an identifier's shape (see {@link TextRules.identifiers}): 1 to 128 of letters, digits,
 * `_ . : / -`, starting with a letter, digit or `_`; a letter in it unless it is all digits; no run of 6 or more
 * digits standing alone (not touching a letter: `call_4111111111111111` is not an identifier, the hex of
 * `msg_29301550320c…` is); not an IBAN. So `call_abc123`, `toolu_01A0…`, `auto`, `image/png`, `5m`, `42` are
 * identifiers, and e-mail addresses, card numbers, phone numbers, IBANs and prose (spaces) never are. One pass
 * over the characters.
 */
export function isIdentifier(value: string): boolean {
  const n = value.length;
  if (n === 0 || n > 128 || (n >= 15 && n <= 34 && IBAN.test(value))) return false;
  let letter = false;
  let separated = false;
  let run = 0; // digits in the current run
  let runAfterLetter = false; // the current run follows a letter
  let previousLetter = false;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) {
      letter = true;
      previousLetter = true;
      run = 0;
      continue;
    }
    if (c >= 0x30 && c <= 0x39) {
      if (run === 0) runAfterLetter = previousLetter;
      run++;
    } else if (c === 0x5f || (i > 0 && (c === 0x2e || c === 0x3a || c === 0x2f || c === 0x2d))) {
      if (run >= 6 && !runAfterLetter) return false;
      run = 0;
      separated = true;
    } else {
      return false;
    }
    previousLetter = false;
  }
  if (run >= 6 && !runAfterLetter) return false;
  return letter || !separated;
}

/** The shortest value read as a base64 payload. */
const MIN_BINARY = 24;
/** The header of a base64 `data:` URL (RFC 2397), up to its comma: `data:image/png;base64,`. */
const DATA_URL_HEADER = /^data:[\w.+-]*\/?[\w.+-]*(?:;[\w.+-]+(?:=[^;,]*)?)*;base64$/;
/** The longest `data:` URL header read, characters (a media type with its parameters). */
const MAX_DATA_URL_HEADER = 256;

/**
 * Whether `value` from `start` is base64 (`urlSafe`: or base64url) with at most two `=` of padding. A loop over
 * the characters, not a regular expression: a payload is megabytes, and a backtracking match over it is slow
 * (~140 ms a MiB) and overflows the stack past a few MiB.
 */
function isBase64From(value: string, start: number, urlSafe: boolean): boolean {
  let end = value.length;
  if (end > start && value.charCodeAt(end - 1) === 0x3d) end--;
  if (end > start && value.charCodeAt(end - 1) === 0x3d) end--;
  for (let i = start; i < end; i++) {
    const c = value.charCodeAt(i);
    const alphanumeric = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);
    if (alphanumeric || c === 0x2b || c === 0x2f) continue;
    if (urlSafe && (c === 0x2d || c === 0x5f)) continue;
    return false;
  }
  return true;
}

/**
 * Whether `value` is a binary payload, not text: a base64 `data:` URL (in any field), or raw base64 or base64url
 * of at least {@link MIN_BINARY} characters in one of the rules' `binary` fields. A URL that is not a base64
 * `data:` URL (`https://…?email=…`) is text.
 */
export function isBinary(value: string, binaryField: boolean): boolean {
  if (value.length < MIN_BINARY) return false;
  if (value.startsWith("data:")) {
    const comma = value.indexOf(",");
    if (comma < 0 || comma > MAX_DATA_URL_HEADER) return false;
    return DATA_URL_HEADER.test(value.slice(0, comma)) && isBase64From(value, comma + 1, false);
  }
  return binaryField && isBase64From(value, 0, true);
}

/** An object or array being walked: its fields (undefined for an array) and the next one to visit. */
interface Frame {
  readonly holder: Container;
  readonly fields: readonly string[] | undefined;
  readonly length: number;
  next: number;
  readonly scope: TextScope;
  readonly group: number;
  /** The field this container sits under (arrays are transparent), for the rules' `identifiers`. */
  readonly name: string;
}

/** One walk: a stack of the containers open on the way down; strings are read in place, in document order. */
class Walk {
  private readonly stack: Frame[] = [];

  constructor(
    private readonly rules: TextRules,
    private readonly out: TextSlot[],
  ) {}

  /** Visits `holder[key]` and everything inside it; `owner`: the field `holder` sits under. */
  run(holder: Container, key: string | number, scope: TextScope, group: number, owner: string): void {
    const stack = this.stack;
    const value = (holder as Record<string | number, unknown>)[key];
    if (typeof key === "string") this.field(holder as Obj, key, value, scope, group, owner);
    else this.element(holder, key, value, scope, group, owner);
    while (stack.length > 0) {
      const frame = stack[stack.length - 1] as Frame;
      if (frame.next === frame.length) {
        stack.pop();
        continue;
      }
      const i = frame.next++;
      const fields = frame.fields;
      if (fields === undefined) {
        const array = frame.holder as unknown[];
        this.element(array, i, array[i], frame.scope, frame.group, frame.name);
      } else {
        const obj = frame.holder as Obj;
        const field = fields[i] as string;
        const scope = this.rules.nested?.(obj, field) ?? frame.scope;
        this.field(obj, field, obj[field], scope, frame.group, frame.name);
      }
    }
  }

  /** Reads `obj[field]` (`value`): a slot for the key when it is text, then the value's. */
  private field(
    obj: Obj,
    field: string,
    value: unknown,
    scope: TextScope,
    group: number,
    owner: string,
  ): void {
    if (isTextKey(field)) this.out.push(new KeySlot(field, scope, group, obj));
    if (typeof value === "string") {
      if (value !== "" && !this.skipped(value, field, owner)) {
        this.out.push(new FieldSlot(value, scope, group, obj, field));
      }
    } else if (typeof value === "object" && value !== null) {
      this.open(value, scope, group, field);
    }
  }

  /** Reads an element of an array (`value`) sitting under the field `owner`. */
  private element(
    holder: Container,
    index: number,
    value: unknown,
    scope: TextScope,
    group: number,
    owner: string,
  ): void {
    if (typeof value === "string") {
      if (value !== "" && !this.skipped(value, owner, undefined)) {
        this.out.push(new FieldSlot(value, scope, group, holder, index));
      }
    } else if (typeof value === "object" && value !== null) {
      this.open(value, scope, group, owner);
    }
  }

  /** Opens an object or array for the walk. */
  private open(value: object, scope: TextScope, group: number, name: string): void {
    if (Array.isArray(value)) {
      this.stack.push({
        holder: value,
        fields: undefined,
        length: value.length,
        next: 0,
        scope,
        group,
        name,
      });
    } else {
      const fields = Object.keys(value);
      this.stack.push({ holder: value as Obj, fields, length: fields.length, next: 0, scope, group, name });
    }
  }

  /** Whether a string under `field` (in an object under `parent`; undefined for an array element) is not text. */
  private skipped(value: string, field: string, parent: string | undefined): boolean {
    const rule = this.rules.identifiers.get(field);
    if (rule !== undefined && (rule === true || (parent !== undefined && rule.has(parent)))) {
      if (isIdentifier(value)) return true;
    }
    return value.length >= MIN_BINARY && isBinary(value, this.rules.binary.has(field));
  }
}

/**
 * Every text of a request body under `rules`, in document order (see the module comment). The slots write into
 * `body` and the objects and arrays inside it.
 */
export function walkTexts(body: Obj, rules: TextRules): TextSlot[] {
  const out: TextSlot[] = [];
  const walk = new Walk(rules, out);
  for (const key of Object.keys(body)) {
    if (rules.skip.has(key)) continue;
    const grouped = rules.groups.get(key);
    const value = body[key];
    if (grouped !== undefined && Array.isArray(value)) {
      if (isTextKey(key)) out.push(new KeySlot(key, REQUEST_SCOPE, -1, body));
      for (let i = 0; i < value.length; i++) walk.run(value, i, grouped(value[i]), i, key);
    } else if (grouped !== undefined && typeof value === "string") {
      walk.run(body, key, grouped(value), 0, "");
    } else {
      walk.run(body, key, rules.scopes.get(key) ?? REQUEST_SCOPE, -1, "");
    }
  }
  return out;
}

/**
 * Every text of `holder[key]` under `rules` (an answer's message or output item), in `scope` and `group`, appended
 * to `out`; `owner` is the field `holder` sits under.
 */
export function walkValue(
  holder: Container,
  key: string | number,
  scope: TextScope,
  group: number,
  rules: TextRules,
  out: TextSlot[],
  owner = "",
): void {
  new Walk(rules, out).run(holder, key, scope, group, owner);
}
