/**
 * The scanner's Prometheus metrics (prom-client, own registry). Label values come from a fixed set, never
 * from a client.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** Why a scan request was refused (the `reason` label). */
export type RejectReason = "invalid_request" | "too_large" | "not_ready";

/** Metrics of one scanner process. */
export interface ScannerMetrics {
  registry: Registry;
  /** `scanner_scans_total{label}`: scans answered, by the label returned (SAFE, INJECTION). */
  scans: Counter<"label">;
  /** `scanner_scan_duration_seconds`: time to classify one text (tokenize + every window), seconds. */
  duration: Histogram;
  /** `scanner_scan_chunks`: windows per scanned text. */
  chunks: Histogram;
  /** `scanner_rejected_requests_total{reason}`: scan requests refused before classification. */
  rejected: Counter<"reason">;
  /** `scanner_model_loaded`: 1 once the model answers, 0 while it downloads or loads. */
  modelLoaded: Gauge;
}

/** Creates the registry; `defaults` adds prom-client's process metrics (off in tests). */
export function createMetrics(options: { defaults?: boolean } = {}): ScannerMetrics {
  const registry = new Registry();
  if (options.defaults) collectDefaultMetrics({ register: registry });
  return {
    registry,
    scans: new Counter({
      name: "scanner_scans_total",
      help: "Texts scanned, by the label answered.",
      labelNames: ["label"],
      registers: [registry],
    }),
    duration: new Histogram({
      name: "scanner_scan_duration_seconds",
      help: "Time to classify one text, all windows included.",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    chunks: new Histogram({
      name: "scanner_scan_chunks",
      help: "Token windows per scanned text.",
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [registry],
    }),
    rejected: new Counter({
      name: "scanner_rejected_requests_total",
      help: "Scan requests refused before classification, by reason.",
      labelNames: ["reason"],
      registers: [registry],
    }),
    modelLoaded: new Gauge({
      name: "scanner_model_loaded",
      help: "1 when the model is loaded and scans are answered, else 0.",
      registers: [registry],
    }),
  };
}
