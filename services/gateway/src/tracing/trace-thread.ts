/**
 * The trace thread's entry (a `node:worker_threads` worker started by `threaded-export.ts`): it builds each
 * posted call's OTLP JSON spans (`langfuse-spans.ts`), holds them in the bounded queue (`bounded-exporter.ts`:
 * same bounds and outage behaviour as on the event loop) and posts the batches to Langfuse (`otlp-http.ts`).
 * Counter changes go back to the loop at most every {@link REPORT_MS} ms, and before a flush is answered.
 */
import { parentPort, workerData } from "node:worker_threads";
import { BoundedBatchExporter } from "./bounded-exporter.js";
import { callSpans, EXPORT_SCOPE, toolCallSpans } from "./langfuse-spans.js";
import { otlpHttpSender } from "./otlp-http.js";
import { exportRequest } from "./otlp-json.js";
import type { CountsDelta, FromLoop, ToLoop, TraceThreadSettings } from "./trace-thread-protocol.js";

const REPORT_MS = 200;
const port = parentPort;
if (port === null) throw new Error("trace-thread.ts runs as a worker thread only");
const settings = workerData as TraceThreadSettings;
const post = (message: ToLoop) => port.postMessage(message);

let delta: CountsDelta = { dropped: 0, exported: 0, failures: 0, queued: 0 };
let changed = false;
let reportTimer: NodeJS.Timeout | undefined;
function report(): void {
  if (reportTimer) clearTimeout(reportTimer);
  reportTimer = undefined;
  if (!changed) return;
  post({ type: "counts", ...delta });
  delta = { dropped: 0, exported: 0, failures: 0, queued: delta.queued };
  changed = false;
}
function note(change: Partial<CountsDelta>): void {
  delta.dropped += change.dropped ?? 0;
  delta.exported += change.exported ?? 0;
  delta.failures += change.failures ?? 0;
  if (change.queued !== undefined) delta.queued = change.queued;
  if (change.error !== undefined) delta.error = change.error;
  changed = true;
  reportTimer ??= setTimeout(report, REPORT_MS);
}

const exporter = new BoundedBatchExporter(otlpHttpSender(settings), exportRequest(EXPORT_SCOPE), {
  maxSpans: settings.maxQueueSpans,
  maxBytes: settings.maxQueueBytes,
  batchSize: settings.batchSize,
  flushIntervalMs: settings.flushIntervalMs,
  counters: {
    dropped: (n) => note({ dropped: n }),
    exported: (n) => note({ exported: n }),
    queued: (n) => note({ queued: n }),
    failed: (error) => note({ failures: 1, error: error?.message ?? "unknown error" }),
  },
});

port.on("message", (message: FromLoop) => {
  if (message.type === "calls") {
    for (const call of message.calls) {
      try {
        exporter.export(call.tool ? toolCallSpans(call.facts, settings) : callSpans(call.facts, settings));
      } catch {
        // A call whose spans cannot be built is left out (the loop's tracer logs such calls).
      }
    }
    post({ type: "taken", calls: message.calls.length });
    return;
  }
  const done = message.stop ? exporter.shutdown() : exporter.forceFlush();
  void done.then(() => {
    report();
    post({ type: "flushed", id: message.id, left: exporter.size });
  });
});
