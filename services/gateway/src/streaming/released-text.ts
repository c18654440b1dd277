/**
 * The text of each payload a chat relay writes to the client (after the output guard), for an observer that
 * records the answer (`StreamText`), without parsing a payload the relay already read: the relay extracts
 * each chunk's text as it reads it (a plain content chunk's by `plain-chunk.ts`, any other from its one
 * `JSON.parse`) and hands it over with the payload.
 *
 * - Unguarded, a payload goes out as it was read: its text is the one read.
 * - Guarded, the payloads handed to the guard wait here in order, and each payload the guard lets out is looked
 *   for among the oldest few waiting (the guard releases them in order, the one given or its rewrite:
 *   `StreamOutputGuard` in pipeline/types.ts). The very string handed over: its text as read is used, and it and
 *   any older ones (dropped by the guard) stop waiting. Not found: the guard rewrote it (or made it), so it is
 *   parsed ({@link payloadText}) and taken for the oldest one's rewrite, which stops waiting, kept aside in case
 *   it comes next after all (a payload the guard added before it).
 *
 * Whatever the guard does, a text is always the text of the string written (it is the text of an equal string);
 * a guard that adds or drops many payloads only costs parses.
 */
import { payloadText } from "./stream-text.js";

/** How many of the oldest payloads waiting a payload the guard let out is looked for among. */
const WINDOW = 4;

/** See the module comment. */
export class ReleasedText {
  /** Payloads handed to the guard and still waiting, and their texts as read (undefined: not read). */
  private readonly payloads: string[] = [];
  private readonly texts: Array<string | undefined> = [];
  /** The oldest payload waiting. */
  private next = 0;
  /** The payload last taken for a rewrite, and its text (see the module comment). */
  private asideText: string | undefined;
  private aside: string | undefined;

  /** @param onText receives the text of each written payload that has any (never ""), in order. */
  constructor(private readonly onText: (text: string) => void) {}

  /** `payload` goes to the output guard; `text` is its text as read (the payload's {@link payloadText}). */
  handed(payload: string, text: string | undefined): void {
    this.payloads.push(payload);
    this.texts.push(text);
  }

  /**
   * `payload` was written to the client. `text`: its text when known (it went out as read, or carries none by
   * construction); leave it out for a payload the guard let out.
   */
  written(payload: string, text?: string): void {
    const known = text ?? this.fromGuard(payload);
    if (known !== "") this.onText(known);
  }

  /** The text of a payload the guard let out: see the module comment. */
  private fromGuard(payload: string): string {
    const end = Math.min(this.next + WINDOW, this.payloads.length);
    for (let at = this.next; at < end; at++) {
      if (this.payloads[at] !== payload) continue;
      const text = this.texts[at];
      this.stopWaiting(at + 1);
      return text ?? payloadText(payload);
    }
    if (this.aside === payload) {
      const text = this.asideText;
      this.aside = undefined;
      return text ?? payloadText(payload);
    }
    if (this.next < this.payloads.length) {
      this.aside = this.payloads[this.next];
      this.asideText = this.texts[this.next];
      this.stopWaiting(this.next + 1);
    }
    return payloadText(payload);
  }

  /** The payloads before `until` stop waiting. */
  private stopWaiting(until: number): void {
    if (until < this.payloads.length) {
      this.next = until;
      return;
    }
    this.payloads.length = 0;
    this.texts.length = 0;
    this.next = 0;
  }
}
