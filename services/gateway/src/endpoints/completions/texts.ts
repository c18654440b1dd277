/**
 * The texts of a legacy text completions request and answer (OpenAI API reference, "Create completion" and the
 * completion object), as {@link TextSlot}s:
 *
 * - request: `prompt` as a string, or each string of an array of strings (group: its index), and `suffix`, in
 *   the `user` scope; token-id arrays carry no text; no other field is text a model reads;
 * - answer: each choice's `text` (group: the choice's index), in the `assistant` scope.
 */
import { fieldSlot, type TextSlot } from "../../guardrails/text/slots.js";

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Every text of a completions request; the slots write into `body` (or its `prompt` array). */
export function completionRequestTexts(body: Record<string, unknown>): TextSlot[] {
  const out: TextSlot[] = [];
  const prompt = body.prompt;
  if (typeof prompt === "string") fieldSlot(body, "prompt", "user", 0, out);
  else if (Array.isArray(prompt)) {
    for (let i = 0; i < prompt.length; i++) fieldSlot(prompt, i, "user", i, out);
  }
  fieldSlot(body, "suffix", "user", -1, out);
  return out;
}

/** Every text of a `text_completion` answer: each choice's `text`. */
export function completionAnswerTexts(answer: unknown): TextSlot[] {
  const out: TextSlot[] = [];
  if (!isObj(answer) || !Array.isArray(answer.choices)) return out;
  for (let i = 0; i < answer.choices.length; i++) {
    const choice = answer.choices[i];
    if (isObj(choice)) fieldSlot(choice, "text", "assistant", i, out);
  }
  return out;
}
