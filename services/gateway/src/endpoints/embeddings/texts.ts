/**
 * The texts of an embeddings request (OpenAI API reference, "Create embeddings"): `input` as a string, or each
 * string of an array of strings, as {@link TextSlot}s in {@link REQUEST_SCOPE} (group: the element's index).
 * Token-id arrays carry no text and give no slot; no other field is text a model reads (`model`, `dimensions`,
 * `encoding_format`, `user`).
 */
import { fieldSlot, REQUEST_SCOPE, type TextSlot } from "../../guardrails/text/slots.js";

/** Every text of `body.input`; the slots write into `body` (or its `input` array). */
export function embeddingInputTexts(body: Record<string, unknown>): TextSlot[] {
  const out: TextSlot[] = [];
  const input = body.input;
  if (typeof input === "string") fieldSlot(body, "input", REQUEST_SCOPE, 0, out);
  else if (Array.isArray(input)) {
    for (let i = 0; i < input.length; i++) fieldSlot(input, i, REQUEST_SCOPE, i, out);
  }
  return out;
}
