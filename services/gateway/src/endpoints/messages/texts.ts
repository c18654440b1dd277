/**
 * Every text a model or the upstream reads in a Messages request or answer (Anthropic API reference,
 * "Messages"), as {@link TextSlot}s: the walk of `guardrails/text/walk.ts` over the whole body under
 * {@link MESSAGES_TEXT_RULES}. Every string at any depth is read, unknown fields and block types included
 * (`citations`, image and document sources' URLs, `mcp_servers`, …), but for the exclusions below (documented in
 * `docs/guardrails.md`):
 *
 * - not read: `model` (replaced by the deployment's) and LiteLLM's `tags` (dropped);
 * - read unless identifier-shaped: `type`, `role`, `id`, `tool_use_id`, `name`, `media_type`, `file_id`,
 *   `tool_choice`, `service_tier`, `ttl`, `user_id`;
 * - base64 payloads (a source's `data` when it is base64, a thinking block's `signature`, `data:` URLs) are
 *   not text.
 *
 * Scopes: `system` in the `system` scope (group -1); each message one group in its role's scope, a `tool_use`
 * block's `input` in {@link TOOL_CALL_SCOPE}; everything else the `request` scope, group -1. The answer: its
 * content blocks, as the assistant's.
 */
import { type TextSlot, TOOL_CALL_SCOPE } from "../../guardrails/text/slots.js";
import { identifierFields, type TextRules, walkTexts, walkValue } from "../../guardrails/text/walk.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** What the guardrails skip in a Messages body, and the scopes they read it in (see the module comment). */
export const MESSAGES_TEXT_RULES: TextRules = {
  skip: new Set(["model", "tags"]),
  identifiers: identifierFields([
    "type",
    "role",
    "id",
    "tool_use_id",
    "name",
    "media_type",
    "file_id",
    "tool_choice",
    "service_tier",
    "ttl",
    "user_id",
  ]),
  binary: new Set(["data", "signature"]),
  groups: new Map([["messages", (m: unknown) => (isObj(m) && typeof m.role === "string" ? m.role : "")]]),
  scopes: new Map([["system", "system"]]),
  // `tool_use` (and the server tools' `server_tool_use`, `mcp_tool_use`) blocks: the call's input.
  nested: (holder, key) =>
    key === "input" && typeof holder.type === "string" && holder.type.endsWith("tool_use")
      ? TOOL_CALL_SCOPE
      : undefined,
};

/** Every text of a Messages request body; the slots write into `body` and the objects inside it. */
export function messagesRequestTexts(body: Obj): TextSlot[] {
  return walkTexts(body, MESSAGES_TEXT_RULES);
}

/** The model-written texts of a Messages answer (`type: "message"`): its content blocks, as the assistant's. */
export function messageAnswerTexts(answer: unknown): TextSlot[] {
  const out: TextSlot[] = [];
  if (isObj(answer)) walkValue(answer, "content", "assistant", 0, MESSAGES_TEXT_RULES, out);
  return out;
}
