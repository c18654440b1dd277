/**
 * The PII guardrail on one hook: one analyzer call with every text, the policy's thresholds, allow list and
 * actions, then the verdict: block (any BLOCK entity), mask (any MASK entity), or allow. In enforce mode a block
 * becomes a refusal and a mask rewrites the texts; in monitor mode the verdict is only recorded.
 */

import { decide } from "../decision.js";
import type { GuardMode, PiiPolicy } from "../policy/schema.js";
import { failedVerdict, piiBlocked, type Refusal } from "../refusals.js";
import { type NormalizedText, normalizeForDetection, originalSpan } from "../text/normalize.js";
import type { TextSlot } from "../text/slots.js";
import type { GuardDecision } from "../types.js";
import type { PiiSpan } from "./analyzer.js";
import { AnalyzerUnavailable, type PiiAnalyzer } from "./analyzer.js";
import { findings, maskText, type PiiFindings } from "./mask.js";

/** The verdict of one PII check. */
export interface PiiVerdict {
  decision: GuardDecision;
  /** Set when the call must be refused (enforce mode only). */
  refusal?: Refusal;
  /** The detections that count (absent after an analyzer error). */
  findings?: PiiFindings;
}

/**
 * Checks `texts` (does not rewrite them; see {@link applyMask}). The analyzer reads each text normalised
 * (`text/normalize.ts`: NFKC, invisible characters removed); the allow list is compared with the normalised
 * value; the findings' spans are offsets into the texts as given (masking replaces the original characters).
 * @param mode the effective mode for this call (never "off": the caller skips the guardrail then).
 */
export async function inspectPii(
  policy: PiiPolicy,
  analyzer: PiiAnalyzer,
  texts: readonly string[],
  hook: GuardDecision["hook"],
  mode: Exclude<GuardMode, "off">,
): Promise<PiiVerdict> {
  const started = performance.now();
  const base = { guardrail: policy.name, hook, mode };
  if (texts.length === 0) return { decision: decide(base, "allow", performance.now() - started) };
  const normalized = texts.map(normalizeForDetection);
  const read = normalized.map((n) => n.text);
  let spans: Awaited<ReturnType<PiiAnalyzer["analyze"]>>;
  try {
    spans = await analyzer.analyze(read, Object.keys(policy.entities));
  } catch (error) {
    const reason = error instanceof AnalyzerUnavailable ? error.message : "analyzer failed";
    return failedVerdict(base, reason, started, policy.onError);
  }
  const found = findings(policy, read, spans);
  found.spans = found.spans.map((list, i) => toOriginal(list, normalized[i]));
  const latencyMs = performance.now() - started;
  if (found.block.length > 0) {
    const decision = decide(base, "block", latencyMs);
    decision.entities = found.block;
    return mode === "enforce"
      ? { decision, findings: found, refusal: piiBlocked(found.block, policy.name, hook) }
      : { decision, findings: found };
  }
  if (found.mask.length > 0) {
    const decision = decide(base, "mask", latencyMs);
    decision.entities = found.mask;
    return { decision, findings: found };
  }
  return { decision: decide(base, "allow", latencyMs), findings: found };
}

/** `spans` (offsets into the normalised text) as offsets into the original text. */
function toOriginal(spans: PiiSpan[], normalized: NormalizedText | undefined): PiiSpan[] {
  if (normalized?.starts === undefined || spans.length === 0) return spans;
  return spans.map((s) => {
    const [start, end] = originalSpan(normalized, s.start, s.end);
    return { entityType: s.entityType, start, end, score: s.score };
  });
}

/**
 * Rewrites each slot whose text has spans, replacing them with `<ENTITY_TYPE>`; last slot first, so a value is
 * written before the object key above it is renamed (`text/slots.ts`).
 */
export function applyMask(slots: readonly TextSlot[], found: PiiFindings): void {
  for (let i = slots.length - 1; i >= 0; i--) {
    const slot = slots[i] as TextSlot;
    const spans = found.spans[i];
    if (spans !== undefined && spans.length > 0) slot.set(maskText(slot.text, spans));
  }
}
