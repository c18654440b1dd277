/**
 * The guardrail decisions of a call as response headers: `x-litellm-applied-guardrails` (the guardrails that ran,
 * comma-separated, as LiteLLM names the header) and `x-guardrail-decisions`, e.g.
 * `pii=mask:EMAIL_ADDRESS,PHONE_NUMBER; prompt_injection=allow:0.03` (`block(monitor)`: a monitor-mode
 * guardrail's verdict, recorded and not acted upon). Sent with JSON answers (`answer-json.ts`) and with a stream's
 * headers (`relayed-stream.ts`), which go out before its output is checked, so they carry the input decisions
 * only; the observers get all of them.
 */
import type { GuardDecision } from "../../guardrails/types.js";

/** Keeps a name or entity header-safe (they come from configuration, never from the client). */
const token = (value: string) => value.replace(/[^\w.-]/g, "_");

/** One decision as `name=action[(monitor)][:ENTITY,…][:score]` (`(monitor)`: recorded, not acted upon). */
function formatDecision(decision: GuardDecision): string {
  const mode = decision.mode === "monitor" ? "(monitor)" : "";
  let out = `${token(decision.guardrail)}=${decision.action}${mode}`;
  if (decision.entities !== undefined && decision.entities.length > 0) {
    out += `:${decision.entities.map(token).join(",")}`;
  }
  if (decision.score !== undefined) out += `:${Number(decision.score.toFixed(4))}`;
  return out;
}

/** The guardrail headers for `decisions`; empty when there are none. */
export function decisionHeaders(decisions: readonly GuardDecision[]): Record<string, string> {
  if (decisions.length === 0) return {};
  const names = [...new Set(decisions.map((d) => token(d.guardrail)))];
  return {
    "x-litellm-applied-guardrails": names.join(","),
    "x-guardrail-decisions": decisions.map(formatDecision).join("; "),
  };
}
