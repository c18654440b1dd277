/**
 * The errors a guardrail answers with (OpenAI-shaped, GatewayError). A refusal carries the decisions of its
 * hook; the engine also adds them to the call's decisions, from which the chat route writes
 * `x-guardrail-decisions` on the refused response and the observers (traces) read them.
 */
import { GatewayError } from "../errors/gateway-error.js";
import { type DecisionBase, decide } from "./decision.js";
import type { OnError } from "./policy/schema.js";
import type { GuardDecision } from "./types.js";

/** The spend log's `reason` of a call a guardrail blocked (a 503 `guardrail_unavailable` keeps its code). */
export const GUARDRAIL_VIOLATION = "guardrail_violation";

/** A call refused by a guardrail (400 block, or 503 when a fail_closed guardrail's service failed). */
export class GuardrailRefusal extends GatewayError {
  /** Every decision of the call's hook, the refusing one included. */
  readonly decisions: readonly GuardDecision[];

  constructor(
    status: number,
    message: string,
    options: { type: string; code: string; param?: string | null },
    decisions: readonly GuardDecision[],
  ) {
    // The spend log tells a guardrail's block from other bad requests (whose type is also invalid_request_error).
    super(status, message, { ...options, reason: status === 503 ? options.code : GUARDRAIL_VIOLATION });
    this.name = "GuardrailRefusal";
    this.decisions = decisions;
  }
}

/** What a refusing guardrail says; turned into a GuardrailRefusal once all decisions of the hook are known. */
export interface Refusal {
  status: number;
  message: string;
  type: string;
  code: string;
  param: string | null;
}

/** 400, LiteLLM's wording: "Blocked PII entity detected: CREDIT_CARD by Guardrail: pii" (names no value). */
export function piiBlocked(
  entities: readonly string[],
  guardrail: string,
  hook: GuardDecision["hook"],
): Refusal {
  return {
    status: 400,
    message: `Blocked PII entity detected: ${entities.join(", ")} by Guardrail: ${guardrail}`,
    type: "invalid_request_error",
    code: "pii_detected",
    param: hook === "pre_call" ? "messages" : null,
  };
}

/** 400 for a prompt injection at or above the threshold. */
export function injectionBlocked(score: number, threshold: number, guardrail: string): Refusal {
  return {
    status: 400,
    message: `Prompt injection detected by Guardrail: ${guardrail} (score ${Math.round(score * 1000) / 1000} ≥ threshold ${threshold})`,
    type: "invalid_request_error",
    code: "prompt_injection_detected",
    param: "messages",
  };
}

/** 413 when a message is longer than the prompt-injection scanner scans. */
export function textTooLong(guardrail: string): Refusal {
  return {
    status: 413,
    message: `A message is longer than Guardrail: ${guardrail} can scan; shorten it or split it across calls.`,
    type: "invalid_request_error",
    code: "message_too_long_for_guardrail",
    param: "messages",
  };
}

/** 503 when a fail_closed guardrail's service cannot answer. */
export function guardrailUnavailable(guardrail: string, reason: string): Refusal {
  return {
    status: 503,
    message: `Guardrail ${guardrail} is unavailable (${reason}); the call was refused (on_error: fail_closed).`,
    type: "service_unavailable",
    code: "guardrail_unavailable",
    param: null,
  };
}

/**
 * The verdict when a guardrail's service failed: an `error` decision, plus a 503 refusal when the guardrail
 * enforces and its `on_error` is fail_closed.
 * @param startedAt performance.now() when the guardrail started.
 */
export function failedVerdict(
  base: DecisionBase,
  reason: string,
  startedAt: number,
  onError: OnError,
): { decision: GuardDecision; refusal?: Refusal } {
  const decision = decide(base, "error", performance.now() - startedAt);
  decision.detail = reason;
  return base.mode === "enforce" && onError === "fail_closed"
    ? { decision, refusal: guardrailUnavailable(base.guardrail, reason) }
    : { decision };
}

/** The first refusal as a GuardrailRefusal carrying `decisions`, or undefined when there is none. */
export function firstRefusal(
  refusals: ReadonlyArray<Refusal | undefined>,
  decisions: readonly GuardDecision[],
): GuardrailRefusal | undefined {
  const first = refusals.find((r) => r !== undefined);
  return first === undefined
    ? undefined
    : new GuardrailRefusal(first.status, first.message, first, decisions);
}
