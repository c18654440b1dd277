/**
 * Client of Presidio's analyzer REST API (microsoft/presidio, presidio-analyzer/app.py; docs
 * "Presidio Analyzer API"): `POST {base}/analyze {text: string[], language, entities}` answers one list of
 * `{entity_type, start, end, score, analysis_explanation}` per text (`text` as an array since 2.2.361). Presidio
 * counts offsets in Unicode code points (Python strings); they are converted to the UTF-16 offsets of JS strings.
 */
import { request } from "undici";
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
  const url = `${options.apiBase}/analyze`;
  const language = options.language ?? "en";
  return {
    kind: "presidio",
    async analyze(texts, entities) {
      if (texts.length === 0) return [];
      let body: unknown;
      try {
        const res = await request(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ text: texts, language, entities }),
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        if (res.statusCode !== 200) {
          await res.body.dump();
          throw new AnalyzerUnavailable(`analyzer answered HTTP ${res.statusCode}`);
        }
        body = await res.body.json();
      } catch (error) {
        if (error instanceof AnalyzerUnavailable) throw error;
        const name = (error as Error).name;
        throw new AnalyzerUnavailable(
          name === "TimeoutError"
            ? `analyzer timed out after ${options.timeoutMs} ms`
            : "analyzer unreachable",
          { cause: error },
        );
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
