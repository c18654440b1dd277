/**
 * Text slots: every text of a request or answer that a model reads, with where it sits and how to replace it.
 * Endpoint-neutral: an endpoint's extractor (chat completions in `endpoints/chat-completions/texts.ts`; Responses items, Anthropic
 * blocks or embeddings input elsewhere) walks its own body shape and hands the guardrails a list of slots built
 * with {@link fieldSlot} and {@link collectTexts}. The PII guardrail reads and may rewrite every slot; the
 * prompt-injection guardrail scans the slots of the scopes its policy names, one text per group.
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

type Container = Record<string, unknown> | unknown[];

/** A slot on `target[key]`; a class, not a closure per slot (the chat path builds several per call). */
class FieldSlot implements TextSlot {
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
class KeySlot implements TextSlot {
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

/** Keys read as plain identifiers (`type`, `order_id`, `$ref`): not text a guardrail finds anything in. */
const IDENTIFIER = /^[A-Za-z_$][\w$.-]{0,63}$/;

/** Adds `target[key]` as a slot when it is a non-empty string. */
export function fieldSlot(
  target: Container,
  key: string | number,
  scope: TextScope,
  group: number,
  out: TextSlot[],
): void {
  const value = (target as Record<string | number, unknown>)[key];
  if (typeof value === "string" && value !== "") out.push(new FieldSlot(value, scope, group, target, key));
}

/**
 * Adds every non-empty string under `target[key]` as a slot: the value itself when it is a string, else every
 * string inside it, at any depth, in document order, object keys included unless they read as plain
 * identifiers (a key's slot comes before its value's). For fields whose meaning the extractor does not know:
 * whatever text they carry is read by the guardrails. Rewrite the slots last to first (see `applyMask`), so a
 * value is written before its key is renamed.
 */
export function collectTexts(
  target: Container,
  key: string | number,
  scope: TextScope,
  group: number,
  out: TextSlot[],
): void {
  const value = (target as Record<string | number, unknown>)[key];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) collectTexts(value, i, scope, group, out);
  } else if (typeof value === "object" && value !== null) {
    const obj = value as Record<string, unknown>;
    for (const k in obj) {
      if (!IDENTIFIER.test(k)) out.push(new KeySlot(k, scope, group, obj));
      collectTexts(obj, k, scope, group, out);
    }
  } else {
    fieldSlot(target, key, scope, group, out);
  }
}

/** Whether any slot of `slots` holds a non-blank text in a scope `include` accepts. */
export function hasText(slots: readonly TextSlot[], include: (scope: TextScope) => boolean): boolean {
  for (const s of slots) if (include(s.scope) && s.text.trim() !== "") return true;
  return false;
}
