/**
 * The texts of a legacy text completions request and answer (OpenAI API reference, "Create completion" and the
 * completion object), as {@link TextSlot}s:
 *
 * - request: the walk of `guardrails/text/walk.ts` under {@link COMPLETION_TEXT_RULES}: `prompt` as a string
 *   (group 0) or each string of an array (group: its index) and `suffix`, in the `user` scope; every other string,
 *   unknown fields included, in the `request` scope; not read: `model`, LiteLLM's `tags`, `logit_bias` (token ids),
 *   and an identifier-shaped `user` or `service_tier`; token-id arrays carry no text;
 * - answer: each choice's `text` (group: the choice's index), in the `assistant` scope.
 */
import { FieldSlot, type TextSlot } from "../../guardrails/text/slots.js";
import { identifierFields, type TextRules, walkTexts } from "../../guardrails/text/walk.js";

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** What the guardrails skip in a completions body, and the scopes they read it in. */
export const COMPLETION_TEXT_RULES: TextRules = {
  skip: new Set(["model", "tags", "logit_bias"]),
  identifiers: identifierFields(["user", "service_tier"]),
  binary: new Set(),
  groups: new Map([["prompt", () => "user"]]),
  scopes: new Map([["suffix", "user"]]),
};

/** Every text of a completions request; the slots write into `body` (or its `prompt` array). */
export function completionRequestTexts(body: Record<string, unknown>): TextSlot[] {
  return walkTexts(body, COMPLETION_TEXT_RULES);
}

/** Every text of a `text_completion` answer: each choice's `text`. */
export function completionAnswerTexts(answer: unknown): TextSlot[] {
  const out: TextSlot[] = [];
  if (!isObj(answer) || !Array.isArray(answer.choices)) return out;
  for (let i = 0; i < answer.choices.length; i++) {
    const choice = answer.choices[i];
    if (isObj(choice) && typeof choice.text === "string" && choice.text !== "") {
      out.push(new FieldSlot(choice.text, "assistant", i, choice, "text"));
    }
  }
  return out;
}
