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
 * An identifier's shape: 1 to 128 of letters, digits, `_ . : / -`, starting with a letter, digit or `_`, with at
 * least one letter and no run of 6 digits (`call_abc123`, `toolu_01A0…`, `auto`, `image/png`, `5m`). E-mail
 * addresses, card numbers, phone numbers and IBANs never have it, nor does prose (spaces).
 */
const IDENTIFIER_SHAPE = /^(?!.*\d{6})(?=.*[A-Za-z])[\w][\w.:/-]{0,127}$/;
/** Whether `value` has an identifier's shape (see {@link TextRules.identifiers}). */
export const isIdentifier = (value: string): boolean => IDENTIFIER_SHAPE.test(value);

/** Base64 or base64url, at least 24 characters, optional padding. */
const BASE64 = /^[A-Za-z0-9+/_-]{24,}={0,2}$/;
/** A `data:` URL with a base64 payload (RFC 2397): `data:image/png;base64,iVBOR…`. */
const DATA_URL = /^data:[\w.+-]*\/?[\w.+-]*(?:;[\w.+-]+(?:=[^;,]*)?)*;base64,[A-Za-z0-9+/]*={0,2}$/;

/**
 * Whether `value` is a binary payload, not text: a base64 `data:` URL (in any field), or raw base64 in one of the
 * rules' `binary` fields. A URL that is not a base64 `data:` URL (`https://…?email=…`) is text.
 */
export function isBinary(value: string, binaryField: boolean): boolean {
  if (value.length < 24) return false;
  if (value.startsWith("data:")) return DATA_URL.test(value);
  return binaryField && BASE64.test(value);
}

/** The pending values of one walk: parallel stacks, one entry per value still to visit. */
class Walk {
  private readonly holders: Container[] = [];
  private readonly keys: Array<string | number> = [];
  private readonly scopes: TextScope[] = [];
  private readonly groups: number[] = [];
  /** The field the holder sits under (arrays are transparent), for the rules' `identifiers`. */
  private readonly owners: string[] = [];

  constructor(
    private readonly rules: TextRules,
    private readonly out: TextSlot[],
  ) {}

  /** Visits `holder[key]` and everything inside it; `owner`: the field `holder` sits under. */
  run(holder: Container, key: string | number, scope: TextScope, group: number, owner: string): void {
    this.push(holder, key, scope, group, owner);
    while (this.keys.length > 0) {
      this.visit(
        this.holders.pop() as Container,
        this.keys.pop() as string | number,
        this.scopes.pop() as TextScope,
        this.groups.pop() as number,
        this.owners.pop() as string,
      );
    }
  }

  private push(
    holder: Container,
    key: string | number,
    scope: TextScope,
    group: number,
    owner: string,
  ): void {
    this.holders.push(holder);
    this.keys.push(key);
    this.scopes.push(scope);
    this.groups.push(group);
    this.owners.push(owner);
  }

  private visit(
    holder: Container,
    key: string | number,
    scope: TextScope,
    group: number,
    owner: string,
  ): void {
    const named = typeof key === "string";
    if (named && isTextKey(key)) this.out.push(new KeySlot(key, scope, group, holder as Obj));
    const value = (holder as Record<string | number, unknown>)[key];
    if (typeof value === "string") {
      if (value !== "" && !this.skipped(value, named ? key : owner, named ? owner : undefined)) {
        this.out.push(new FieldSlot(value, scope, group, holder, key));
      }
      return;
    }
    if (typeof value !== "object" || value === null) return;
    const name = named ? key : owner;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) this.push(value, i, scope, group, name);
      return;
    }
    const obj = value as Obj;
    const fields = Object.keys(obj);
    const nested = this.rules.nested;
    for (let i = fields.length - 1; i >= 0; i--) {
      const field = fields[i] as string;
      this.push(obj, field, nested?.(obj, field) ?? scope, group, name);
    }
  }

  /** Whether a string under `field` (in an object under `parent`; undefined for an array element) is not text. */
  private skipped(value: string, field: string, parent: string | undefined): boolean {
    const rule = this.rules.identifiers.get(field);
    if (rule !== undefined && (rule === true || (parent !== undefined && rule.has(parent)))) {
      if (isIdentifier(value)) return true;
    }
    return isBinary(value, this.rules.binary.has(field));
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
