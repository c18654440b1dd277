/**
 * The texts of an embeddings request (OpenAI API reference, "Create embeddings"), as {@link TextSlot}s: the walk
 * of `guardrails/text/walk.ts` under {@link EMBEDDING_TEXT_RULES}: `input` as a string (group 0) or each string of
 * an array (group: its index), and every other string, unknown fields included, all in the `request` scope.
 * Token-id arrays carry no text. Not read: `model`, LiteLLM's `tags`, and an identifier-shaped `encoding_format`
 * or `user`.
 */
import { REQUEST_SCOPE, type TextSlot } from "../../guardrails/text/slots.js";
import { identifierFields, type TextRules, walkTexts } from "../../guardrails/text/walk.js";

/** What the guardrails skip in an embeddings body. */
export const EMBEDDING_TEXT_RULES: TextRules = {
  skip: new Set(["model", "tags"]),
  identifiers: identifierFields(["encoding_format", "user"]),
  binary: new Set(),
  groups: new Map([["input", () => REQUEST_SCOPE]]),
  scopes: new Map(),
};

/** Every text of an embeddings request; the slots write into `body` (or its `input` array). */
export function embeddingInputTexts(body: Record<string, unknown>): TextSlot[] {
  return walkTexts(body, EMBEDDING_TEXT_RULES);
}
