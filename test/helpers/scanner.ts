/**
 * The real scanner (scanner/src/app.ts with the committed tiny model of scanner/tiny-model) listening on an
 * ephemeral port of 127.0.0.1, in the test's process: the gateway's prompt_injection guardrail can call it at
 * GUARD_SCANNER_API_BASE. The tiny model scores texts with words such as "ignore previous instructions" near 1.
 */
import { buildApp } from "../../scanner/src/app.js";
import { createMetrics } from "../../scanner/src/metrics/metrics.js";
import { loadClassifier } from "../../scanner/src/model/classifier.js";
import { ModelSlot } from "../../scanner/src/model/model-slot.js";
import { TINY_MODEL, TINY_MODEL_DIR } from "../scanner/tiny-model.js";

/** A listening scanner. */
export interface TinyScanner {
  /** Base URL, e.g. http://127.0.0.1:41234 (what GUARD_SCANNER_API_BASE holds). */
  url: string;
  close(): Promise<void>;
}

/** Loads the tiny model and starts the scanner; resolves once /health would answer 200. */
export async function startTinyScanner(): Promise<TinyScanner> {
  const metrics = createMetrics();
  const slot = new ModelSlot(TINY_MODEL, metrics);
  const app = buildApp({ slot, metrics, maxChars: 100_000 });
  slot.ready(await loadClassifier({ modelDir: TINY_MODEL_DIR, model: TINY_MODEL }));
  const url = await app.listen({ port: 0, host: "127.0.0.1" });
  return { url, close: () => app.close() };
}
