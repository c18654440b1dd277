/**
 * LiteLLM's `cache_control_injection_points` (litellm_params; docs.litellm.ai/docs/tutorials/prompt_caching, and
 * the type `CacheControlMessageInjectionPoint` in litellm/types/integrations/anthropic_cache_control_hook.py): the
 * operator declares where prompt-caching breakpoints go, and the gateway adds Anthropic's `cache_control` there on
 * every call bound to an `anthropic/` deployment, so that clients need not know about prompt caching.
 *
 * A point is `{location: "message", role?: "system" | "user" | "assistant", index?: int, control?: {type:
 * "ephemeral", ttl?: "5m" | "1h"}}`. `index` (negative counts from the end) wins over `role`; a role point marks
 * every message of that role; `control` defaults to `{type: "ephemeral"}`. A message is marked on its last content
 * part (string content becomes one text block); a message that already has a `cache_control` is left as the
 * client sent it; no mark is added once the request has 4 breakpoints (Anthropic's limit), as LiteLLM's hook does.
 *
 * On chat completions the messages are the chat's (system messages included, as LiteLLM counts them), before the
 * translation to Messages; on `/v1/messages` they are the Messages body's, and `role: system` marks its `system`.
 */

import type { CacheControlInjectionPoint } from "../../config/types.js";

export type { CacheControlInjectionPoint } from "../../config/types.js";

type Json = Record<string, unknown>;

/** Anthropic's limit of cache breakpoints per request ("Prompt caching": up to 4). */
export const MAX_BREAKPOINTS = 4;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Breakpoints already in `holders` (messages, tools, system blocks) and their content parts. */
function countMarks(holders: unknown[]): number {
  let marks = 0;
  for (const h of holders) {
    if (!isObject(h)) continue;
    if (h.cache_control !== undefined) marks++;
    if (Array.isArray(h.content)) marks += countMarks(h.content);
  }
  return marks;
}

const hasMark = (message: Json) =>
  message.cache_control !== undefined ||
  (Array.isArray(message.content) &&
    message.content.some((p) => isObject(p) && p.cache_control !== undefined));

/** Marks the message's last content part; false when it has no content to mark. */
function mark(message: Json, control: Json): boolean {
  if (typeof message.content === "string") {
    message.content = [{ type: "text", text: message.content, cache_control: control }];
    return true;
  }
  const last = Array.isArray(message.content) ? message.content.at(-1) : undefined;
  if (!isObject(last)) return false;
  last.cache_control = control;
  return true;
}

/** The messages a point selects, in order. */
function targets(messages: Json[], point: CacheControlInjectionPoint): Json[] {
  if (point.index !== undefined) {
    const at = point.index < 0 ? messages.length + point.index : point.index;
    const message = messages[at];
    return message === undefined ? [] : [message];
  }
  return point.role === undefined ? [] : messages.filter((m) => m.role === point.role);
}

/**
 * Adds the points' `cache_control` to `messages` (mutated), given `existing` breakpoints already in the request;
 * returns how many breakpoints the request has afterwards.
 */
function inject(messages: Json[], points: readonly CacheControlInjectionPoint[], existing: number): number {
  let marks = existing;
  for (const point of points) {
    const control: Json = { ...(point.control ?? { type: "ephemeral" }) };
    for (const message of targets(messages, point)) {
      if (marks >= MAX_BREAKPOINTS) return marks;
      if (!hasMark(message) && mark(message, control)) marks++;
    }
  }
  return marks;
}

/** Injects into a chat completion request body (parsed; mutated), before its translation to Messages. */
export function injectIntoChat(chat: Json, points: readonly CacheControlInjectionPoint[]): void {
  if (!Array.isArray(chat.messages)) return;
  const messages = chat.messages.filter(isObject);
  const tools = Array.isArray(chat.tools) ? chat.tools : [];
  inject(messages, points, countMarks(messages) + countMarks(tools));
}

/** Injects into a Messages request body (parsed; mutated): `role: system` marks its `system`. */
export function injectIntoMessages(body: Json, points: readonly CacheControlInjectionPoint[]): void {
  const messages = Array.isArray(body.messages) ? body.messages.filter(isObject) : [];
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const systemBlocks = Array.isArray(body.system) ? body.system : [];
  let marks = countMarks(messages) + countMarks(tools) + countMarks(systemBlocks);
  const systemPoint = points.find((p) => p.index === undefined && p.role === "system");
  if (
    systemPoint !== undefined &&
    body.system !== undefined &&
    body.system !== "" &&
    marks < MAX_BREAKPOINTS
  ) {
    // The system prompt as a pseudo-message, so that it is marked like any other.
    const system: Json = { content: body.system };
    if (!hasMark(system) && mark(system, { ...(systemPoint.control ?? { type: "ephemeral" }) })) marks++;
    body.system = system.content;
  }
  inject(
    messages,
    points.filter((p) => p !== systemPoint),
    marks,
  );
}
