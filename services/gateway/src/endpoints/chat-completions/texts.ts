/**
 * Every text a model or the upstream reads in a chat completions request or answer (OpenAI API reference,
 * "Create chat completion" and the chat completion object), as {@link TextSlot}s: the walk of `guardrails/text/walk.ts`
 * over the whole body under {@link CHAT_TEXT_RULES}. Every string at any depth is read, unknown fields included,
 * but for the exclusions below (documented in `docs/guardrails.md`):
 *
 * - not read: `model` (replaced by the deployment's), LiteLLM's `tags` (dropped), `logit_bias` (token ids);
 * - read unless identifier-shaped: `type`, `role`, `id`, `tool_call_id`, `file_id`, a function's `name`, `tool_choice`,
 *   `detail`, `format`, `voice`, `ttl`, `user`, `service_tier`, `reasoning_effort`, `verbosity`, `modalities`,
 *   `prompt_cache_key`, `safety_identifier`, `search_context_size`;
 * - base64 payloads (`input_audio.data`, `file.file_data`, `data:` image URLs) are not text.
 *
 * Scopes: each message is one group in its role's scope, its `tool_calls` (and legacy `function_call`) in
 * {@link TOOL_CALL_SCOPE}; everything outside the messages is the `request` scope, group -1. The answer: each
 * choice's `message` read the same way, one group per choice.
 */
import { type TextSlot, TOOL_CALL_SCOPE } from "../../guardrails/text/slots.js";
import { identifierFields, type TextRules, walkTexts, walkValue } from "../../guardrails/text/walk.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A message's scope: its role (`""` for a message that is not an object or has no role). */
const messageScope = (m: unknown): string => (isObj(m) && typeof m.role === "string" ? m.role : "");

/** What the guardrails skip in a chat completions body, and the scopes they read it in (see the module comment). */
export const CHAT_TEXT_RULES: TextRules = {
  skip: new Set(["model", "tags", "logit_bias"]),
  identifiers: identifierFields(
    [
      "type",
      "role",
      "id",
      "tool_call_id",
      "file_id",
      "tool_choice",
      "detail",
      "format",
      "voice",
      "ttl",
      "user",
      "service_tier",
      "reasoning_effort",
      "verbosity",
      "modalities",
      "prompt_cache_key",
      "safety_identifier",
      "search_context_size",
    ],
    { name: ["function", "functions", "function_call"] },
  ),
  binary: new Set(["data", "file_data"]),
  groups: new Map([["messages", messageScope]]),
  scopes: new Map(),
  nested: (_holder, key) => (key === "tool_calls" || key === "function_call" ? TOOL_CALL_SCOPE : undefined),
};

/** Every text of a chat completions request body; the slots write into `body` and the objects inside it. */
export function chatRequestTexts(body: Obj): TextSlot[] {
  return walkTexts(body, CHAT_TEXT_RULES);
}

/** Every text of a `chat.completion` answer: each choice's `message`, grouped by choice. */
export function chatCompletionTexts(completion: unknown): TextSlot[] {
  const out: TextSlot[] = [];
  if (!isObj(completion) || !Array.isArray(completion.choices)) return out;
  for (let i = 0; i < completion.choices.length; i++) {
    const choice = completion.choices[i];
    if (isObj(choice) && isObj(choice.message)) {
      walkValue(choice, "message", messageScope(choice.message), i, CHAT_TEXT_RULES, out, "choices");
    }
  }
  return out;
}
