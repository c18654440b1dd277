/**
 * The PII analyzer seam: Presidio's REST analyzer (presidio-client.ts) or the built-in recognizers
 * (`builtInAnalyzer` in recognizers.ts). Both answer with spans per text; thresholds, the allow list and the actions are applied by
 * the guardrail (pii-guard.ts), so both analyzers are judged by the same rules.
 */
/** One detection, Presidio's RecognizerResult (`entity_type`, `start`, `end`, `score`) with UTF-16 offsets. */
export interface PiiSpan {
  entityType: string;
  /** Offsets into the JS string (UTF-16 code units), end exclusive. */
  start: number;
  end: number;
  /** Confidence, 0..1. */
  score: number;
}

/** Finds PII in several texts at once. */
export interface PiiAnalyzer {
  /** "presidio" or "built-in" (for logs and decision details). */
  readonly kind: string;
  /**
   * @param texts every text of one call (message contents, text parts, tool-call arguments).
   * @param entities the entity names the policy acts on.
   * @returns one span list per text, in order.
   * @throws AnalyzerUnavailable when the analyzer cannot answer (network, timeout, non-2xx, bad body).
   */
  analyze(texts: readonly string[], entities: readonly string[]): Promise<PiiSpan[][]>;
}

/** The analyzer service could not answer; `reason` is safe to show (no text from the call). */
export class AnalyzerUnavailable extends Error {
  override name = "AnalyzerUnavailable";
}
