/**
 * The texts of a chat call the PII guardrail reads and may rewrite: in the request, each message's string
 * `content`, its `text` parts (`{"type": "text", "text": …}`), and its tool calls' `function.arguments`; in a
 * `chat.completion`, each choice's `message.content` and tool-call arguments (OpenAI API reference, chat objects).
 */
import type { GuardMessage } from "../types.js";

/** One text and how to replace it in the object it came from. */
export interface TextSlot {
  text: string;
  set(value: string): void;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A string field of an object, as a slot (none when the field is not a non-empty string). */
function field(target: Obj, key: string, out: TextSlot[]): void {
  const value = target[key];
  if (typeof value === "string" && value !== "") {
    out.push({
      text: value,
      set: (v) => {
        target[key] = v;
      },
    });
  }
}

function toolCallArguments(toolCalls: unknown, out: TextSlot[]): void {
  if (!Array.isArray(toolCalls)) return;
  for (const call of toolCalls) {
    if (isObj(call) && isObj(call.function)) field(call.function, "arguments", out);
  }
}

/** Texts of one message (content string or text parts, then tool-call arguments). */
function messageTexts(message: Obj, out: TextSlot[]): void {
  if (Array.isArray(message.content)) {
    for (const part of message.content) if (isObj(part) && part.type === "text") field(part, "text", out);
  } else {
    field(message, "content", out);
  }
  toolCallArguments(message.tool_calls, out);
}

/** Every text of the request's messages, in order. */
export function requestTexts(messages: readonly GuardMessage[]): TextSlot[] {
  const out: TextSlot[] = [];
  for (const message of messages) messageTexts(message, out);
  return out;
}

/** The texts of one message (for the prompt-injection scanner: one scan per message), joined by newlines. */
export function messageText(message: GuardMessage): string {
  const out: TextSlot[] = [];
  messageTexts(message, out);
  return out.map((s) => s.text).join("\n");
}

/** Every text of a `chat.completion` answer (`choices[].message`). */
export function completionTexts(completion: unknown): TextSlot[] {
  const out: TextSlot[] = [];
  if (!isObj(completion) || !Array.isArray(completion.choices)) return out;
  for (const choice of completion.choices)
    if (isObj(choice) && isObj(choice.message)) messageTexts(choice.message, out);
  return out;
}

const isText = (v: unknown): boolean => typeof v === "string" && v.trim() !== "";

/**
 * Whether {@link messageText} of `message` would hold a non-blank text, found without building it (no slot,
 * closure or joined string: the prompt-injection guard asks this on every call when it has no scanner).
 */
export function messageHasText(message: GuardMessage): boolean {
  if (Array.isArray(message.content)) {
    for (const part of message.content)
      if (isObj(part) && part.type === "text" && isText(part.text)) return true;
  } else if (isText(message.content)) {
    return true;
  }
  if (!Array.isArray(message.tool_calls)) return false;
  for (const call of message.tool_calls) {
    if (isObj(call) && isObj(call.function) && isText(call.function.arguments)) return true;
  }
  return false;
}
