/**
 * The guardrails seam of the pipeline. `CallGuard`, `GuardOutcome`, `GuardDecision` and `StreamOutputGuard` are
 * declared with the pipeline's types (`pipeline/types.ts`); the engine in this folder implements them.
 *
 * `GuardCall` is the part of the chat route's `CallContext` the guard reads and writes: the request body
 * (rewritten in place when masking), the caller, and the call's decisions (a refusal adds its decisions there
 * before it throws, so the response headers and the observers see them). A `CallContext` satisfies it.
 */
import type { GuardDecision } from "../pipeline/types.js";

export type {
  CallGuard,
  GuardDecision,
  GuardOutcome,
  StreamOutputEnd,
  StreamOutputGuard,
} from "../pipeline/types.js";

/** What the guard needs from a call (a subset of the chat route's CallContext). */
export interface GuardCall {
  body: Record<string, unknown>;
  /**
   * The caller. A virtual key's `metadata.guardrails` (`{"pii": "monitor", "prompt_injection": "off"}`) overrides
   * the policy's mode per key; only the master key can set key metadata (admin API).
   */
  auth: { kind: string; metadata?: Readonly<Record<string, unknown>> | undefined };
  /** The call's guardrail decisions so far. */
  decisions: GuardDecision[];
}
