/**
 * Collects the text of a streamed chat completion from its `chat.completion.chunk` payloads (OpenAI API
 * reference, "The chat completion chunk object": `choices[].delta.content`), or of a streamed legacy completion
 * from its `text_completion` chunks (`choices[].text`), for observers that record the
 * answer (tracing). Only the first choice is kept, up to a cap, so a long stream costs bounded memory.
 */

/** Text kept at most, characters. */
export const STREAM_TEXT_MAX_CHARS = 65_536;

/** See the module comment. */
export class StreamText {
  private parts: string[] = [];
  private length = 0;
  private cut = false;

  constructor(private readonly maxChars = STREAM_TEXT_MAX_CHARS) {}

  /** Takes one SSE `data:` payload; ignores `[DONE]`, errors and chunks that are not JSON. */
  add(payload: string): void {
    if (this.cut || payload === "[DONE]" || !(payload.includes('"content"') || payload.includes('"text"')))
      return;
    let chunk: { choices?: Array<{ index?: number; text?: unknown; delta?: { content?: unknown } }> };
    try {
      chunk = JSON.parse(payload);
    } catch {
      return;
    }
    for (const choice of chunk.choices ?? []) {
      const content = choice.delta?.content ?? choice.text;
      if ((choice.index ?? 0) === 0 && typeof content === "string") this.addText(content);
    }
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
