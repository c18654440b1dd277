/**
 * What the guardrails read of an MCP tool call: every string of its `arguments` (keys included) before it goes
 * upstream, in the `tool_call` scope (the prompt-injection policy's scope for tool-call arguments), and every
 * text of the tool's result (`content[].text`, resource texts, `structuredContent`) before it reaches the
 * caller. Base64 payloads (`data`, `blob`) and identifier-shaped `type`, `mimeType` and `uri` values are
 * skipped, as on the model endpoints (`guardrails/text/walk.ts`).
 */
import { REQUEST_SCOPE, type TextSlot, TOOL_CALL_SCOPE } from "../guardrails/text/slots.js";
import { identifierFields, type TextRules, walkTexts } from "../guardrails/text/walk.js";

/** The guarded body of a tool call: the arguments the upstream will get. */
export interface ToolCallBody extends Record<string, unknown> {
  arguments: Record<string, unknown>;
}

const ARGUMENT_RULES: TextRules = {
  skip: new Set(),
  identifiers: identifierFields([]),
  binary: new Set(),
  groups: new Map(),
  scopes: new Map([["arguments", TOOL_CALL_SCOPE]]),
};

const RESULT_RULES: TextRules = {
  skip: new Set(["_meta", "isError"]),
  identifiers: identifierFields(["type", "mimeType", "uri", "name"]),
  binary: new Set(["data", "blob"]),
  groups: new Map(),
  scopes: new Map([["content", REQUEST_SCOPE]]),
};

/** Every text of a tool call's arguments; the slots write into `body.arguments`. */
export function toolArgumentTexts(body: Record<string, unknown>): TextSlot[] {
  return walkTexts(body, ARGUMENT_RULES);
}

/** Every text of a `tools/call` result (`CallToolResult`); the slots write into it. */
export function toolResultTexts(result: Record<string, unknown>): TextSlot[] {
  return walkTexts(result, RESULT_RULES);
}
