/**
 * Response headers that make every guardrail decision visible:
 * - `x-litellm-applied-guardrails`: comma list of the guardrails that ran (LiteLLM's header), e.g. `pii,prompt_injection`.
 * - `x-guardrail-decisions`: `; `-separated `name=action[:detail]`, e.g.
 *   `pii=mask:EMAIL_ADDRESS,PHONE_NUMBER; prompt_injection=allow:0.03`. A monitor-mode verdict reads
 *   `block(monitor)`; a post_call decision's name gets `@post_call`; `detail` is the entities, the score
 *   P(INJECTION) rounded to 3 decimals, or the reason of an error.
 */
import type { GuardDecision } from "./types.js";

const score = (s: number) => String(Math.round(s * 1000) / 1000);

/** One decision as `name=action[:detail]`. */
export function formatDecision(d: GuardDecision): string {
  const name = d.hook === "post_call" ? `${d.guardrail}@post_call` : d.guardrail;
  const action =
    d.mode === "monitor" && d.action !== "allow" && d.action !== "error" ? `${d.action}(monitor)` : d.action;
  const detail =
    d.action === "error"
      ? (d.detail ?? "").replace(/[;,=\r\n]/g, " ")
      : d.entities !== undefined && d.entities.length > 0
        ? d.entities.join(",")
        : d.score !== undefined
          ? score(d.score)
          : "";
  return detail === "" ? `${name}=${action}` : `${name}=${action}:${detail}`;
}

/** The two headers for a call's decisions; empty when no guardrail ran. */
export function guardrailHeaders(decisions: readonly GuardDecision[]): Record<string, string> {
  if (decisions.length === 0) return {};
  return {
    "x-litellm-applied-guardrails": [...new Set(decisions.map((d) => d.guardrail))].join(","),
    "x-guardrail-decisions": decisions.map(formatDecision).join("; "),
  };
}
