/**
 * The prompt-injection guardrail: each message of the policy's roles is scanned (in parallel, each within the
 * policy's `timeout_ms`); the call's score is the highest P(INJECTION). At or above the threshold: block
 * (enforce) or flag (monitor). A scanner failure follows `on_error`: fail_open passes and records an error
 * decision, fail_closed refuses with 503 naming the guardrail. A message longer than the scanner accepts (413)
 * is refused 413 whatever `on_error` says: passing it unscanned would let padding defeat the guardrail.
 */

import { decide } from "../decision.js";
import { messageHasText, messageText } from "../pii/texts.js";
import type { GuardMode, InjectionPolicy } from "../policy/schema.js";
import { failedVerdict, injectionBlocked, type Refusal, textTooLong } from "../refusals.js";
import type { GuardDecision, GuardMessage } from "../types.js";
import { type InjectionScanner, ScannerUnavailable, TextTooLong } from "./scanner-client.js";

/** The verdict of one prompt-injection check. */
export interface InjectionVerdict {
  decision: GuardDecision;
  refusal?: Refusal;
}

/** The `error` decision's detail when GUARD_SCANNER_API_BASE is unset. */
const NOT_CONFIGURED = "scanner not configured (GUARD_SCANNER_API_BASE)";

/** The texts to scan: one per message of the policy's roles, empty ones skipped. */
export function textsToScan(policy: InjectionPolicy, messages: readonly GuardMessage[]): string[] {
  const texts: string[] = [];
  for (const m of messages) {
    if (!policy.roles.includes(m.role)) continue;
    const text = messageText(m);
    if (text.trim() !== "") texts.push(text);
  }
  return texts;
}

/** Whether {@link textsToScan} would find a text, without building any (the no-scanner path runs per call). */
function hasTextToScan(policy: InjectionPolicy, messages: readonly GuardMessage[]): boolean {
  for (const m of messages) if (policy.roles.includes(m.role) && messageHasText(m)) return true;
  return false;
}

/**
 * Scans the texts of `messages` ({@link textsToScan}); none to scan: an `allow` decision.
 * @param scanner undefined when GUARD_SCANNER_API_BASE is unset: treated as a scanner failure ("not configured").
 */
export async function inspectInjection(
  policy: InjectionPolicy,
  scanner: InjectionScanner | undefined,
  messages: readonly GuardMessage[],
  mode: Exclude<GuardMode, "off">,
): Promise<InjectionVerdict> {
  const started = performance.now();
  const base = { guardrail: policy.name, hook: "pre_call" as const, mode };
  // With no scanner this runs on every call: decided without building the texts or an Error object.
  if (scanner === undefined) {
    return hasTextToScan(policy, messages)
      ? failedVerdict(base, NOT_CONFIGURED, started, policy.onError)
      : { decision: decide(base, "allow", 0) };
  }
  const texts = textsToScan(policy, messages);
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
