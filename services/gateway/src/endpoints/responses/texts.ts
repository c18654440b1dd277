/**
 * Every text a model or the upstream reads in a Responses API request or answer (OpenAI API reference,
 * `CreateResponse` and the `Response` object), as {@link TextSlot}s: the walk of `guardrails/text/walk.ts` over the
 * whole body under {@link RESPONSES_TEXT_RULES}. Every string at any depth is read, unknown fields and item types
 * included (`function_call` and `function_call_output` items' every field, `reasoning`, `include`, image
 * `detail`, …), but for the exclusions below (documented in `docs/guardrails.md`):
 *
 * - not read: `model` (replaced by the deployment's) and LiteLLM's `tags` (dropped);
 * - read unless identifier-shaped: `type`, `role`, `id`, `call_id`, `status`, `name`, `detail`, `file_id`,
 *   `include`, `tool_choice`, `truncation`, `service_tier`, `effort`, `summary`, `verbosity`, `user`,
 *   `safety_identifier`, `prompt_cache_key`, `previous_response_id`, `conversation`, `server_label`;
 * - base64 payloads (`file_data`, a reasoning item's `encrypted_content`, `data:` image URLs) are not text.
 *
 * Scopes: `instructions` in the `system` scope (group -1); a string `input` is the user's (group 0); each input
 * item one group: a `*_call` item (`function_call`, …) in {@link TOOL_CALL_SCOPE}, a `*_call_output` item in
 * `tool`, a message (and any other item) in its role's scope; everything else the `request` scope, group -1.
 * The answer: its `output` items, read the same way.
 */
import { type TextSlot, TOOL_CALL_SCOPE } from "../../guardrails/text/slots.js";
import { identifierFields, type TextRules, walkTexts, walkValue } from "../../guardrails/text/walk.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** An input or output item's scope (see the module comment); a string `input` is the user's. */
function itemScope(item: unknown): string {
  if (!isObj(item)) return "user";
  const type = item.type;
  if (typeof type === "string" && type.endsWith("_call_output")) return "tool";
  if (typeof type === "string" && type.endsWith("_call")) return TOOL_CALL_SCOPE;
  return typeof item.role === "string" ? item.role : "";
}

/** What the guardrails skip in a Responses body, and the scopes they read it in (see the module comment). */
export const RESPONSES_TEXT_RULES: TextRules = {
  skip: new Set(["model", "tags"]),
  identifiers: identifierFields([
    "type",
    "role",
    "id",
    "call_id",
    "status",
    "name",
    "detail",
    "file_id",
    "include",
    "tool_choice",
    "truncation",
    "service_tier",
    "effort",
    "summary",
    "verbosity",
    "user",
    "safety_identifier",
    "prompt_cache_key",
    "previous_response_id",
    "conversation",
    "server_label",
  ]),
  binary: new Set(["file_data", "encrypted_content"]),
  groups: new Map([["input", itemScope]]),
  scopes: new Map([["instructions", "system"]]),
};

/** Every text of a Responses request body; the slots write into `body` and the objects inside it. */
export function responsesRequestTexts(body: Obj): TextSlot[] {
  return walkTexts(body, RESPONSES_TEXT_RULES);
}

/** Every model-written text of a `response` object: its output items (text parts, call arguments, …). */
export function responseOutputTexts(response: unknown): TextSlot[] {
  const out: TextSlot[] = [];
  if (!isObj(response) || !Array.isArray(response.output)) return out;
  const output = response.output;
  for (let i = 0; i < output.length; i++) {
    walkValue(output, i, itemScope(output[i]), i, RESPONSES_TEXT_RULES, out, "output");
  }
  return out;
}
