/**
 * The prompt-injection guardrail: the text of each message of the policy's scopes (roles, tool-call arguments,
 * request fields; {@link scansScope}) is scanned normalised (`text/normalize.ts`) (in parallel, each within the
 * policy's `timeout_ms`); the call's score is the highest P(INJECTION). At or above the threshold: block
 * (enforce) or flag (monitor). A scanner failure follows `on_error`: fail_open passes and records an error
 * decision, fail_closed refuses with 503 naming the guardrail. A message longer than the scanner accepts (413)
 * is refused 413 whatever `on_error` says: passing it unscanned would let padding defeat the guardrail.
 */

import { decide } from "../decision.js";
import type { GuardMode, InjectionPolicy } from "../policy/schema.js";
import { failedVerdict, injectionBlocked, type Refusal, textTooLong } from "../refusals.js";
import { normalizeForDetection } from "../text/normalize.js";
import { hasText, REQUEST_SCOPE, type TextScope, type TextSlot, TOOL_CALL_SCOPE } from "../text/slots.js";
import type { GuardDecision } from "../types.js";
import { type InjectionScanner, ScannerUnavailable, TextTooLong } from "./scanner-client.js";

/** The verdict of one prompt-injection check. */
export interface InjectionVerdict {
  decision: GuardDecision;
  refusal?: Refusal;
}

/** The `error` decision's detail when GUARD_SCANNER_API_BASE is unset. */
const NOT_CONFIGURED = "scanner not configured (GUARD_SCANNER_API_BASE)";

/** The message roles OpenAI defines; a message of any other role is scanned whatever `roles` says. */
const KNOWN_ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

/** Whether the policy scans text of `scope` (a message role, tool-call arguments or request fields). */
export function scansScope(policy: InjectionPolicy, scope: TextScope): boolean {
  if (scope === TOOL_CALL_SCOPE) return policy.toolCalls;
  if (scope === REQUEST_SCOPE) return policy.requestFields;
  return policy.roles.includes(scope) || !KNOWN_ROLES.has(scope);
}

/**
 * The texts to scan: the slots of the scanned scopes, one text per group (a message's texts, or the request
 * fields) joined by newlines, normalised; blank ones skipped.
 */
export function textsToScan(policy: InjectionPolicy, slots: readonly TextSlot[]): string[] {
  const groups = new Map<number, string[]>();
  for (const s of slots) {
    if (!scansScope(policy, s.scope)) continue;
    const list = groups.get(s.group);
    if (list === undefined) groups.set(s.group, [s.text]);
    else list.push(s.text);
  }
  const texts: string[] = [];
  for (const list of groups.values()) {
    const text = normalizeForDetection(list.join("\n")).text;
    if (text.trim() !== "") texts.push(text);
  }
  return texts;
}

/**
 * Scans the texts of `slots` ({@link textsToScan}); none to scan: an `allow` decision.
 * @param scanner undefined when GUARD_SCANNER_API_BASE is unset: treated as a scanner failure ("not configured").
 */
export async function inspectInjection(
  policy: InjectionPolicy,
  scanner: InjectionScanner | undefined,
  slots: readonly TextSlot[],
  mode: Exclude<GuardMode, "off">,
): Promise<InjectionVerdict> {
  const started = performance.now();
  const base = { guardrail: policy.name, hook: "pre_call" as const, mode };
  // With no scanner this runs on every call: decided from the slots without joining texts or an Error object.
  if (scanner === undefined) {
    return hasText(slots, (scope) => scansScope(policy, scope))
      ? failedVerdict(base, NOT_CONFIGURED, started, policy.onError)
      : { decision: decide(base, "allow", 0) };
  }
  const texts = textsToScan(policy, slots);
  if (texts.length === 0) return { decision: decide(base, "allow", 0) };
  let score = 0;
  try {
    const results = await Promise.all(texts.map((t) => scanner.scan(t, policy.timeoutMs)));
    for (const r of results) score = Math.max(score, r.score);
  } catch (error) {
    if (error instanceof TextTooLong) {
      // Not an outage: on_error does not apply (fail_open would let any injection through by padding it).
      const decision = decide(base, "block", performance.now() - started);
      decision.detail = error.message;
      return mode === "enforce" ? { decision, refusal: textTooLong(policy.name) } : { decision };
    }
    const reason = error instanceof ScannerUnavailable ? error.message : "scanner failed";
    return failedVerdict(base, reason, started, policy.onError);
  }
  const latencyMs = performance.now() - started;
  if (score >= policy.threshold) {
    const decision = decide(base, "block", latencyMs);
    decision.score = score;
    return mode === "enforce"
      ? { decision, refusal: injectionBlocked(score, policy.threshold, policy.name) }
      : { decision };
  }
  const decision = decide(base, "allow", latencyMs);
  decision.score = score;
  return { decision };
}
