/**
 * Client of the prompt-injection scanner service (scanner/ in this repository):
 * `POST {base}/v1/scan {"text": string}` → `{"label": "INJECTION" | "SAFE", "score": P(INJECTION) 0..1,
 * "chunks": number of 512-token windows scanned, "latency_ms": number}`.
 */
import { jsonService, ServiceCallError } from "../http-json.js";

/** The scanner's verdict on one text. */
export interface ScanResult {
  label: "INJECTION" | "SAFE";
  /** P(INJECTION), 0..1. */
  score: number;
  chunks: number;
  /** The scanner's own inference time, ms. */
  latencyMs: number;
}

/** Scans texts for prompt injection. */
export interface InjectionScanner {
  /**
   * @param timeoutMs the whole call's deadline, ms (the policy's `timeout_ms`).
   * @throws TextTooLong when the scanner answers 413; ScannerUnavailable on network errors, timeout, another
   *   non-200 answer or a malformed body.
   */
  scan(text: string, timeoutMs: number): Promise<ScanResult>;
}

/** The scanner could not answer; `message` is safe to show (no text from the call). */
export class ScannerUnavailable extends Error {
  override name = "ScannerUnavailable";
}

/** The scanner refused the text as longer than it scans (HTTP 413): a property of the request, not an outage. */
export class TextTooLong extends Error {
  override name = "TextTooLong";
}

/** A scanner client for the service at `apiBase` (e.g. http://scanner:8000, no trailing slash). */
export function scannerClient(apiBase: string): InjectionScanner {
  const service = jsonService(apiBase, "scanner");
  return {
    async scan(text, timeoutMs) {
      let body: Record<string, unknown> | undefined;
      try {
        body = (await service.post("/v1/scan", { text }, timeoutMs)) as Record<string, unknown> | undefined;
      } catch (error) {
        if (error instanceof ServiceCallError && error.status === 413) {
          throw new TextTooLong("a message is longer than the scanner accepts (HTTP 413)");
        }
        throw new ScannerUnavailable(error instanceof ServiceCallError ? error.message : "scanner failed", {
          cause: error,
        });
      }
      const { label, score, chunks, latency_ms } = body ?? {};
      if (
        (label !== "INJECTION" && label !== "SAFE") ||
        typeof score !== "number" ||
        score < 0 ||
        score > 1
      ) {
        throw new ScannerUnavailable("scanner answered an unexpected body (expected label and score 0..1)");
      }
      return {
        label,
        score,
        chunks: typeof chunks === "number" ? chunks : 1,
        latencyMs: typeof latency_ms === "number" ? latency_ms : 0,
      };
    },
  };
}
