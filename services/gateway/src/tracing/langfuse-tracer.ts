/**
 * Sends one trace per model call to Langfuse over its OTLP endpoint (`otlp-http.ts`): the call's facts are
 * mapped to Langfuse's OpenTelemetry attributes once and written straight into OTLP JSON span texts
 * (`langfuse-spans.ts`, `otlp-json.ts`; no OpenTelemetry SDK span objects), which a bounded batch queue
 * (`bounded-exporter.ts`) sends. The spans and attributes are those Langfuse's own SDK (`@langfuse/otel`'s span
 * processor, `@langfuse/tracing`'s attribute mapping) sent for the same call; otlp-wire.test.ts compares them.
 * With `TRACE_EXPORT_THREAD=true` the spans are built, queued and sent on a worker thread (`threaded-export.ts`,
 * `trace-thread.ts`) and the event loop only captures each call's content (one JSON serialisation) and posts it.
 *
 * A trace: a root span named for the endpoint (`CallTrace.name`: `chat.completions`, `responses`, `embeddings`,
 * `completions`, `anthropic.messages`), also the trace's name, carrying the trace's user, session, tags and
 * metadata; a child generation `<operation> <alias>` (e.g. `chat general`) with the deployment's model, parameters, input/output, usage and cost; one child
 * `guardrail` observation per guardrail decision. An MCP tool call (`recordToolCall`): a root span
 * `mcp.tools.call` and a child observation of Langfuse's type `tool` named `<server>-<tool>`, with the arguments,
 * the result, the server, the cost per query and the status in its metadata, and its guardrail observations. Spans are built after the call from its `CallTrace`, so
 * nothing here runs on the request path but `record()`, which builds the call's span texts, queues them and returns.
 */
import type { FastifyBaseLogger } from "fastify";
import { Counter, Gauge, type Registry } from "prom-client";
import type { TraceSettings } from "../config/trace-settings.js";
import { BoundedBatchExporter, type ExportCounters, type SendBody } from "./bounded-exporter.js";
import type { CallTrace } from "./call-trace.js";
import { callSpans, EXPORT_SCOPE, factsOf, toolCallSpans } from "./langfuse-spans.js";
import { otlpHttpSender } from "./otlp-http.js";
import { exportRequest } from "./otlp-json.js";
import { TraceThread } from "./threaded-export.js";
import type { ToolCallTrace, ToolCallTracer } from "./tool-call-trace.js";
import type { TracedCall } from "./trace-thread-protocol.js";

/** Records finished calls (model calls and MCP tool calls) as traces. */
export interface CallTracer extends ToolCallTracer {
  /** Queues the trace of a finished call; never throws, never waits. */
  record(call: CallTrace): void;
  /** Sends what is queued (best effort). */
  flush(): Promise<void>;
  /** Flushes for at most `timeoutMs`, then stops; logs how many spans were left unsent. */
  shutdown(timeoutMs: number): Promise<void>;
}

/** What the tracer is built from. */
export interface TracerDeps {
  registry: Registry;
  log: FastifyBaseLogger;
  /** Replaces the OTLP/HTTP sender (benchmarks): posts one request body, rejects when it was not accepted. */
  send?: SendBody;
}

const LOG_EVERY_MS = 30_000;

/** Creates the tracer and its metrics (`gateway_trace_*`). Throws only for programming errors. */
export function createLangfuseTracer(settings: TraceSettings, deps: TracerDeps): CallTracer {
  const { registry, log } = deps;
  const dropped = new Counter({
    name: "gateway_trace_dropped_total",
    help: "Trace spans dropped because the export queue was full (Langfuse slow or down).",
    registers: [registry],
  });
  const failures = new Counter({
    name: "gateway_trace_export_failures_total",
    help: "Trace export requests that failed (the spans were queued again).",
    registers: [registry],
  });
  const exported = new Counter({
    name: "gateway_trace_exported_spans_total",
    help: "Trace spans accepted by the trace receiver.",
    registers: [registry],
  });
  const queued = new Gauge({
    name: "gateway_trace_queue_spans",
    aggregator: "sum", // several workers: the rows/spans queued in all of them
    help: "Trace spans waiting to be sent.",
    registers: [registry],
  });

  let lastFailureLog = 0;
  const counters: ExportCounters = {
    dropped: (n) => dropped.inc(n),
    exported: (n) => exported.inc(n),
    queued: (n) => queued.set(n),
    failed: (error) => {
      failures.inc();
      const now = Date.now();
      if (now - lastFailureLog >= LOG_EVERY_MS) {
        lastFailureLog = now;
        log.warn(
          { host: settings.host, error: error?.message },
          "trace export failed; spans stay queued (bounded) and are retried",
        );
      }
    },
  };
  const sink =
    settings.exportThread && deps.send === undefined
      ? threadSink(settings, counters, log)
      : loopSink(settings, deps.send ?? otlpHttpSender(settings), counters);
  const content = { capture: settings.capture, maxContentChars: settings.maxContentChars };

  function record(call: CallTrace): void {
    try {
      sink.add({ tool: false, facts: factsOf(call, content) });
    } catch (error) {
      log.warn({ err: error, requestId: call.requestId }, "could not record the call's trace");
    }
  }

  function recordToolCall(call: ToolCallTrace): void {
    try {
      sink.add({ tool: true, facts: factsOf(call, content) });
    } catch (error) {
      log.warn({ err: error, requestId: call.requestId }, "could not record the tool call's trace");
    }
  }

  return {
    record,
    recordToolCall,
    flush: () => sink.flush(),
    async shutdown(timeoutMs: number) {
      const left = await sink.shutdown(timeoutMs);
      if (left === undefined || left > 0) {
        log.warn(
          { unsentSpans: left ?? "unknown", host: settings.host },
          "shutdown: trace spans left unsent",
        );
      }
    },
  };
}

/** Where a call's facts go: spans built, queued and sent on the event loop, or on the trace thread. */
interface TraceSink {
  add(call: TracedCall): void;
  flush(): Promise<void>;
  /** Resolves with the spans left unsent (undefined: unknown, the flush timed out). */
  shutdown(timeoutMs: number): Promise<number | undefined>;
}

function loopSink(settings: TraceSettings, send: SendBody, counters: ExportCounters): TraceSink {
  const exporter = new BoundedBatchExporter(send, exportRequest(EXPORT_SCOPE), {
    maxSpans: settings.maxQueueSpans,
    maxBytes: settings.maxQueueBytes,
    batchSize: settings.batchSize,
    flushIntervalMs: settings.flushIntervalMs,
    counters,
  });
  return {
    add: (call) =>
      exporter.export(call.tool ? toolCallSpans(call.facts, settings) : callSpans(call.facts, settings)),
    flush: () => exporter.forceFlush(),
    async shutdown(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), timeoutMs);
      });
      const outcome = await Promise.race([exporter.shutdown().then(() => "flushed" as const), timedOut]);
      clearTimeout(timer);
      return outcome === "timeout" ? undefined : exporter.size;
    },
  };
}

function threadSink(settings: TraceSettings, counters: ExportCounters, log: FastifyBaseLogger): TraceSink {
  const thread = new TraceThread(settings, counters, log);
  return {
    add: (call) => thread.add(call),
    flush: async () => {
      await thread.flush();
    },
    shutdown: (timeoutMs) => thread.shutdown(timeoutMs),
  };
}
