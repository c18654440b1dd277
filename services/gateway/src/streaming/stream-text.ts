/**
 * Collects the text of a streamed chat completion from its `chat.completion.chunk` payloads (OpenAI API
 * reference, "The chat completion chunk object": `choices[].delta.content`), or of a streamed legacy completion
 * from its `text_completion` chunks (`choices[].text`), for observers that record the
 * answer (tracing). Only the first choice is kept, up to a cap, so a long stream costs bounded memory.
 */

/** Text kept at most, characters. */
export const STREAM_TEXT_MAX_CHARS = 65_536;

/** A parsed chunk as far as its text goes. */
interface TextChunk {
  choices?: unknown;
}

/** A choice as far as its text goes. */
interface TextChoice {
  index?: unknown;
  text?: unknown;
  delta?: { content?: unknown } | null;
}

/**
 * The text of the first choice in a parsed chunk: for each choice whose `index` is 0 (or absent), its
 * `delta.content`, else its `text` (a legacy completion's chunk), when that is a string; all such joined ("" for none,
 * or when `chunk` is no object with a `choices` array).
 */
export function firstChoiceText(chunk: unknown): string {
  const choices = (chunk as TextChunk | null)?.choices;
  if (!Array.isArray(choices)) return "";
  let text = "";
  for (const choice of choices as unknown[]) {
    if (choice === null || typeof choice !== "object") continue;
    const { index, delta, text: legacy } = choice as TextChoice;
    const content = delta?.content ?? legacy;
    if ((index ?? 0) === 0 && typeof content === "string") text += content;
  }
  return text;
}

/** Whether `payload` can carry text at all (it names `"content"` or `"text"`); one that cannot is never parsed. */
function mayCarryText(payload: string): boolean {
  return payload.includes('"content"') || payload.includes('"text"');
}

/**
 * The text {@link StreamText.add} takes from one SSE `data:` payload: {@link firstChoiceText} of the parsed
 * payload; "" for `[DONE]`, a payload that is not JSON, or one that names neither `"content"` nor `"text"`.
 */
export function payloadText(payload: string): string {
  if (payload === "[DONE]" || !mayCarryText(payload)) return "";
  try {
    return firstChoiceText(JSON.parse(payload));
  } catch {
    return "";
  }
}

/**
 * {@link payloadText} of a payload already parsed: `chunk` is what `JSON.parse` made of `payload` (or of a payload
 * with the same choices, e.g. the same chunk with its `usage` removed). Parses nothing.
 */
export function parsedPayloadText(payload: string, chunk: unknown): string {
  return mayCarryText(payload) ? firstChoiceText(chunk) : "";
}

/** See the module comment. */
export class StreamText {
  private parts: string[] = [];
  private length = 0;
  private cut = false;

  constructor(private readonly maxChars = STREAM_TEXT_MAX_CHARS) {}

  /** Takes one SSE `data:` payload ({@link payloadText}); ignores `[DONE]`, errors and chunks that are not JSON. */
  add(payload: string): void {
    if (this.cut) return;
    const text = payloadText(payload);
    if (text !== "") this.addText(text);
  }

  /** Takes a piece of the answer's text as it was relayed (a native stream's text delta), up to the cap. */
  addText(content: string): void {
    if (this.cut) return;
    const room = this.maxChars - this.length;
    this.parts.push(content.length > room ? content.slice(0, room) : content);
    this.length += Math.min(content.length, room);
    if (content.length > room) this.cut = true;
  }

  /** The text so far, marked when it was cut at the cap. */
  value(): string {
    const text = this.parts.join("");
    return this.cut ? `${text}… [cut at ${this.maxChars} characters]` : text;
  }
}
