/**
 * `POST /v1/scan {"text": string}` → 200 `{"label": "INJECTION"|"SAFE", "score", "chunks", "latency_ms"}`.
 *
 * - `score`: P(INJECTION), 0..1, the highest over the text's windows.
 * - `label`: INJECTION when score >= 0.5 (the model's own decision); callers apply their own threshold to
 *   `score` (the guardrail policy's `threshold`).
 * - `chunks`: number of token windows scanned; `latency_ms`: classification time, ms.
 *
 * Errors (OpenAI-shaped): 400 for a body that is not `{"text": string}`, 413 for a text longer than
 * SCANNER_MAX_CHARS characters, 503 while the model is loading.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ScannerError } from "../errors/scanner-error.js";
import type { ScannerMetrics } from "../metrics/metrics.js";
import type { ModelSlot } from "../model/model-slot.js";

/** The request body. */
export const scanRequestSchema = z.strictObject({ text: z.string() });

/** The 200 response body. */
export interface ScanResponse {
  label: "INJECTION" | "SAFE";
  /** P(INJECTION), 0..1. */
  score: number;
  /** Token windows scanned. */
  chunks: number;
  /** Classification time, ms. */
  latency_ms: number;
}

export interface ScanRouteOptions {
  slot: ModelSlot;
  metrics: ScannerMetrics;
  /** SCANNER_MAX_CHARS: longest text accepted, characters (JavaScript string length). */
  maxChars: number;
}

/** Turns the first zod issue into a message naming the field. */
function describeIssue(error: z.ZodError): { message: string; param: string | null } {
  const issue = error.issues[0]!;
  if (issue.code === "unrecognized_keys") {
    return {
      message: `Unrecognized request argument(s): ${issue.keys.join(", ")}.`,
      param: issue.keys[0] ?? null,
    };
  }
  const param = issue.path.length > 0 ? issue.path.join(".") : null;
  if (param === "text") return { message: "`text` is required and must be a string.", param };
  return { message: 'The request body must be a JSON object {"text": string}.', param };
}

export async function scanRoutes(app: FastifyInstance, options: ScanRouteOptions): Promise<void> {
  const { slot, metrics, maxChars } = options;

  app.post("/v1/scan", async (request) => {
    const parsed = scanRequestSchema.safeParse(request.body);
    if (!parsed.success) {
      metrics.rejected.inc({ reason: "invalid_request" });
      const { message, param } = describeIssue(parsed.error);
      throw new ScannerError(400, message, { type: "invalid_request_error", param });
    }
    const { text } = parsed.data;
    if (text.length > maxChars) {
      metrics.rejected.inc({ reason: "too_large" });
      throw new ScannerError(
        413,
        `text is ${text.length} characters; the scanner accepts at most ${maxChars} (SCANNER_MAX_CHARS).`,
        { type: "invalid_request_error", param: "text", code: "request_too_large" },
      );
    }
    const classifier = slot.classifier;
    if (classifier === undefined) {
      metrics.rejected.inc({ reason: "not_ready" });
      throw new ScannerError(503, `The model ${slot.model} is not loaded yet (state: ${slot.state}).`, {
        type: "service_unavailable_error",
        code: "model_not_ready",
      });
    }
    const started = performance.now();
    const { score, chunks } = await classifier.classify(text);
    const latencyMs = performance.now() - started;
    const label = score >= 0.5 ? "INJECTION" : "SAFE";
    metrics.scans.inc({ label });
    metrics.duration.observe(latencyMs / 1000);
    metrics.chunks.observe(chunks);
    const body: ScanResponse = { label, score, chunks, latency_ms: Math.round(latencyMs * 1000) / 1000 };
    return body;
  });
}
