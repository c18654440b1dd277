/**
 * Client of Presidio's analyzer REST API (microsoft/presidio, presidio-analyzer/app.py; docs
 * "Presidio Analyzer API"): `POST {base}/analyze {text: string[], language, entities}` answers one list of
 * `{entity_type, start, end, score, analysis_explanation}` per text (`text` as an array since 2.2.361). Presidio
 * counts offsets in Unicode code points (Python strings); they are converted to the UTF-16 offsets of JS strings.
 */
import { jsonService, ServiceCallError } from "../http-json.js";
import { AnalyzerUnavailable, type PiiAnalyzer, type PiiSpan } from "./analyzer.js";

/** Options of {@link presidioAnalyzer}. */
export interface PresidioOptions {
  /** e.g. http://pii-analyzer:3000, no trailing slash. */
  apiBase: string;
  /** Per-call timeout, ms. */
  timeoutMs: number;
  /** Presidio language code (default "en"). */
  language?: string;
}

interface RecognizerResult {
  entity_type: string;
  start: number;
  end: number;
  score: number;
}

function isResult(value: unknown): value is RecognizerResult {
  const r = value as RecognizerResult;
  return (
    typeof r === "object" &&
    r !== null &&
    typeof r.entity_type === "string" &&
    Number.isInteger(r.start) &&
    Number.isInteger(r.end) &&
    typeof r.score === "number"
  );
}

/** Maps code-point offsets of `text` to UTF-16 offsets (identity when the text has no astral characters). */
function utf16Offsets(text: string): (codePoint: number) => number {
  if (!/[\uD800-\uDBFF]/.test(text)) return (i) => i;
  const map: number[] = [];
  let unit = 0;
  for (const ch of text) {
    map.push(unit);
    unit += ch.length;
  }
  map.push(unit);
  return (i) => map[i] ?? unit;
}

/** An analyzer backed by Presidio's REST API. */
export function presidioAnalyzer(options: PresidioOptions): PiiAnalyzer {
  const service = jsonService(options.apiBase, "analyzer");
  const language = options.language ?? "en";
  return {
    kind: "presidio",
    async analyze(texts, entities) {
      if (texts.length === 0) return [];
      let body: unknown;
      try {
        body = await service.post("/analyze", { text: texts, language, entities }, options.timeoutMs);
      } catch (error) {
        throw new AnalyzerUnavailable(error instanceof ServiceCallError ? error.message : "analyzer failed", {
          cause: error,
        });
      }
      if (!Array.isArray(body) || body.length !== texts.length) {
        throw new AnalyzerUnavailable(
          "analyzer answered an unexpected body (expected one result list per text)",
        );
      }
      return body.map((results, i) => {
        if (!Array.isArray(results) || !results.every(isResult)) {
          throw new AnalyzerUnavailable(
            "analyzer answered an unexpected body (expected RecognizerResult lists)",
          );
        }
        const toUtf16 = utf16Offsets(texts[i] ?? "");
        return results.map(
          (r): PiiSpan => ({
            entityType: r.entity_type,
            start: toUtf16(r.start),
            end: toUtf16(r.end),
            score: r.score,
          }),
        );
      });
    },
  };
}
