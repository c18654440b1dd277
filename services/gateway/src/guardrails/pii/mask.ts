/**
 * Turns an analyzer's spans into the policy's verdict: which detections count (entity acted on, score at or
 * above its threshold, text not on the allow list), which entities were found, and the masked texts. Masking
 * replaces each span with `<ENTITY_TYPE>`, Presidio's default `replace` operator; overlapping spans are
 * resolved as Presidio's anonymizer does, keeping the higher score (then the longer span).
 */
import { ALL_ENTITIES } from "../policy/entities.js";
import type { PiiAction, PiiPolicy } from "../policy/schema.js";
import type { PiiSpan } from "./analyzer.js";

/** The detections that count, per text, and the entities found by action. */
export interface PiiFindings {
  /** Per text: non-overlapping spans, sorted by start. */
  spans: PiiSpan[][];
  /** Entity names found, by the policy's action, each name once, in order of first appearance. */
  block: string[];
  mask: string[];
}

/** Keeps the spans that count under `policy`, per text. */
export function findings(
  policy: Pick<PiiPolicy, "entities" | "scoreThreshold" | "allowList">,
  texts: readonly string[],
  spans: readonly PiiSpan[][],
): PiiFindings {
  const allow = new Set(policy.allowList);
  const fallback = policy.scoreThreshold[ALL_ENTITIES] ?? 0;
  const found: Record<PiiAction, Set<string>> = { BLOCK: new Set(), MASK: new Set() };
  const kept = texts.map((text, i) => {
    const counted = (spans[i] ?? []).filter((s) => {
      const action = policy.entities[s.entityType];
      if (action === undefined) return false;
      if (s.score < (policy.scoreThreshold[s.entityType] ?? fallback)) return false;
      return !allow.has(text.slice(s.start, s.end));
    });
    const resolved = withoutOverlaps(counted);
    for (const s of resolved) found[policy.entities[s.entityType] as PiiAction].add(s.entityType);
    return resolved;
  });
  return { spans: kept, block: [...found.BLOCK], mask: [...found.MASK] };
}

/** Highest score first (then longest); a span overlapping one already kept is dropped. Result sorted by start. */
function withoutOverlaps(spans: PiiSpan[]): PiiSpan[] {
  if (spans.length < 2) return spans;
  const ranked = [...spans].sort((a, b) => b.score - a.score || b.end - b.start - (a.end - a.start));
  const kept: PiiSpan[] = [];
  for (const s of ranked) if (!kept.some((k) => s.start < k.end && k.start < s.end)) kept.push(s);
  return kept.sort((a, b) => a.start - b.start);
}

/**
 * `text` with each span (sorted by start) replaced by `<ENTITY_TYPE>`. Spans mapped back from a normalised text
 * may touch or overlap (two values in one expanded character): a span starting inside the previous one only
 * extends it.
 */
export function maskText(text: string, spans: readonly PiiSpan[]): string {
  if (spans.length === 0) return text;
  let out = "";
  let at = 0;
  for (const s of spans) {
    if (s.end <= at) continue;
    if (s.start >= at) out += `${text.slice(at, s.start)}<${s.entityType}>`;
    at = s.end;
  }
  return out + text.slice(at);
}
