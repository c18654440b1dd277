/**
 * Text slots: every text of a request or answer that a model reads, with where it sits and how to replace it.
 * Endpoint-neutral: the walk over a body (`walk.ts`), driven by each endpoint's rules (`endpoints/<name>/texts.ts`),
 * hands the guardrails a list of slots. The PII guardrail reads and may rewrite every slot; the prompt-injection
 * guardrail scans the slots of the scopes its policy names, one text per group.
 */

/**
 * Whose text a slot is, for the prompt-injection guardrail's policy: a message's role (`system`, `developer`,
 * `user`, `assistant`, `tool`, or any other role string the client sent) for the text of that message;
 * {@link TOOL_CALL_SCOPE} for the arguments of tool calls a message carries; {@link REQUEST_SCOPE} for text
 * outside the messages (tool definitions, `response_format` schemas, fields the gateway does not know).
 */
export type TextScope = string;
/** Arguments of the tool calls an assistant message carries (`tool_calls[].function.arguments`). */
export const TOOL_CALL_SCOPE = "tool_call";
/** Text outside the messages: tool definitions, response schemas, unknown fields. */
export const REQUEST_SCOPE = "request";

/** One text a model reads, and how to replace it where it came from (masking). */
export interface TextSlot {
  /** The text as the client sent it (not normalised). */
  readonly text: string;
  readonly scope: TextScope;
  /**
   * Slots of one group are scanned together by the prompt-injection guardrail: the index of the message (or
   * choice) they belong to, or -1 for text outside the messages.
   */
  readonly group: number;
  /** Writes `value` where the text was (the object or array it came from is changed in place). */
  set(value: string): void;
}

/** An object or array holding a slot's value. */
export type Container = Record<string, unknown> | unknown[];

/** A slot on `target[key]`; a class, not a closure per slot (the chat path builds several per call). */
export class FieldSlot implements TextSlot {
  constructor(
    readonly text: string,
    readonly scope: TextScope,
    readonly group: number,
    private readonly target: Container,
    private readonly key: string | number,
  ) {}

  set(value: string): void {
    (this.target as Record<string | number, unknown>)[this.key] = value;
  }
}

/**
 * An object key as a slot (a JSON schema's property name is text the model reads). Setting it renames the key in
 * place, keeping the object's key order; a new name already taken gets `_2`, `_3`, … so no value is lost.
 */
export class KeySlot implements TextSlot {
  constructor(
    readonly text: string,
    readonly scope: TextScope,
    readonly group: number,
    private readonly target: Record<string, unknown>,
  ) {}

  set(value: string): void {
    const obj = this.target;
    if (value === this.text || !Object.hasOwn(obj, this.text)) return;
    let name = value;
    for (let n = 2; Object.hasOwn(obj, name); n++) name = `${value}_${n}`;
    const entries = Object.entries(obj);
    for (const [k] of entries) delete obj[k];
    for (const [k, v] of entries) obj[k === this.text ? name : k] = v;
  }
}

/**
 * Whether an object key is read as text: any non-empty key but a plain identifier (a letter, `_` or `$`, then
 * letters, digits, `_`, `$`, `.` or `-`, at most 64 in all: `type`, `order_id`, `$ref`). `bob@corp.com` or
 * `Ignore all previous instructions` as a key is text. One pass over the characters (it runs for every key).
 */
export function isTextKey(key: string): boolean {
  const n = key.length;
  if (n > 64) return true;
  for (let i = 0; i < n; i++) {
    const c = key.charCodeAt(i);
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x24) continue;
    if (i > 0 && ((c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2d)) continue;
    return true;
  }
  return false;
}

/** Whether any slot of `slots` holds a non-blank text in a scope `include` accepts. */
export function hasText(slots: readonly TextSlot[], include: (scope: TextScope) => boolean): boolean {
  for (const s of slots) if (include(s.scope) && s.text.trim() !== "") return true;
  return false;
}
