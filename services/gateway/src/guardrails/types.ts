/**
 * The guardrails seam of the chat path. `ChatGuard`, `GuardOutcome`, `GuardDecision` and `StreamOutputGuard` are
 * declared by the chat route (chat/hooks.ts); the engine in this folder implements them.
 *
 * `GuardCall` is the part of the chat route's `CallContext` the guard reads and writes: the request body
 * (rewritten in place when masking), the caller, and the call's decisions (a refusal adds its decisions there
 * before it throws, so the response headers and the observers see them). A `CallContext` satisfies it.
 */
import type { GuardDecision } from "../chat/hooks.js";

export type {
  ChatGuard,
  GuardDecision,
  GuardOutcome,
  StreamOutputEnd,
  StreamOutputGuard,
} from "../chat/hooks.js";

/** One chat message as the guard sees it (OpenAI's message object; other fields pass through untouched). */
export interface GuardMessage {
  role: string;
  content?: string | unknown[] | null | undefined;
  [field: string]: unknown;
}

/** What the guard needs from a call (a subset of the chat route's CallContext). */
export interface GuardCall {
  body: { messages: GuardMessage[]; [field: string]: unknown };
  /**
   * The caller. A virtual key's `metadata.guardrails` (`{"pii": "monitor", "prompt_injection": "off"}`) overrides
   * the policy's mode per key; only the master key can set key metadata (admin API).
   */
  auth: { kind: string; metadata?: Readonly<Record<string, unknown>> | undefined };
  /** The call's guardrail decisions so far. */
  decisions: GuardDecision[];
}
