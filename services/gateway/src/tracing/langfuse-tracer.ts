/**
 * Sends one trace per model call to Langfuse with its official OpenTelemetry-based SDK: `@langfuse/otel`'s
 * span processor (attribute masking hooks, Langfuse's export headers) in front of our bounded batch
 * exporter, and `@langfuse/tracing`'s attribute mapping (observation type, model, usage_details,
 * cost_details, completion_start_time, level). Contract: Langfuse's OTLP endpoint
 * `POST {host}/api/public/otel/v1/traces`, basic auth public:secret, `x-langfuse-ingestion-version: 4`
 * (Langfuse docs, "OpenTelemetry" integration, real-time ingestion).
 *
 * A trace: a root span named for the endpoint (`CallTrace.name`: `chat.completions`, `responses`, `embeddings`,
 * `completions`, `anthropic.messages`), also the trace's name, carrying the trace's user, session, tags and
 * metadata; a child generation `<operation> <alias>` (e.g. `chat general`) with the deployment's model, parameters, input/output, usage and cost; one child
 * `guardrail` observation per guardrail decision. An MCP tool call (`recordToolCall`): a root span
 * `mcp.tools.call` and a child observation of Langfuse's type `tool` named `<server>-<tool>`, with the arguments,
 * the result, the server, the cost per query and the status in its metadata, and its guardrail observations. Spans are built after the call from its `CallTrace`, so
 * nothing here runs on the request path but `record()`, which queues and returns.
 */
import { LangfuseSpanProcessor } from "@langfuse/otel";
import {
  createObservationAttributes,
  createTraceAttributes,
  LangfuseOtelSpanAttributes,
} from "@langfuse/tracing";
import { type Attributes, ROOT_CONTEXT, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { BasicTracerProvider, type IdGenerator, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { FastifyBaseLogger } from "fastify";
import { Counter, Gauge, type Registry } from "prom-client";
import type { TraceSettings } from "../config/trace-settings.js";
import type { GuardDecision } from "../guardrails/types.js";
import { BoundedBatchExporter } from "./bounded-exporter.js";
import { type CallTrace, capturedContent } from "./call-trace.js";
import { TOOL_CALL_TRACE_NAME, type ToolCallTrace, type ToolCallTracer } from "./tool-call-trace.js";

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
  /** Replaces the OTLP/HTTP exporter (tests). */
  exporter?: SpanExporter;
}

/** Hands out a chosen trace id for the next root span, random ids otherwise. */
class ChosenTraceIds implements IdGenerator {
  next: string | undefined;
  generateTraceId(): string {
    const id = this.next ?? randomHex(16);
    this.next = undefined;
    return id;
  }
  generateSpanId(): string {
    return randomHex(8);
  }
}

function randomHex(bytes: number): string {
  let out = "";
  for (let i = 0; i < bytes; i++)
    out += Math.floor(Math.random() * 256)
      .toString(16)
      .padStart(2, "0");
  return /^0+$/.test(out) ? randomHex(bytes) : out;
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
  const inner =
    deps.exporter ??
    new OTLPTraceExporter({
      url: `${settings.host}/api/public/otel/v1/traces`,
      headers: {
        Authorization: `Basic ${Buffer.from(`${settings.publicKey}:${settings.secretKey}`).toString("base64")}`,
        "x-langfuse-ingestion-version": "4",
        "x-langfuse-sdk-name": "javascript",
        "x-langfuse-public-key": settings.publicKey,
      },
      timeoutMillis: settings.exportTimeoutMs,
    });
  const exporter = new BoundedBatchExporter(inner, {
    maxSpans: settings.maxQueueSpans,
    maxBytes: settings.maxQueueBytes,
    batchSize: settings.batchSize,
    flushIntervalMs: settings.flushIntervalMs,
    counters: {
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
    },
  });
  const ids = new ChosenTraceIds();
  const processor = new LangfuseSpanProcessor({
    exporter,
    exportMode: "immediate",
    mediaUploadEnabled: false,
    // The provider is ours alone: every span it makes is a Langfuse observation.
    shouldExportSpan: () => true,
  });
  const provider = new BasicTracerProvider({ idGenerator: ids, spanProcessors: [processor] });
  const tracer = provider.getTracer("ai-gateway");

  function record(call: CallTrace): void {
    try {
      ids.next = call.traceId;
      const content = capturedContent(call, settings.capture, settings.maxContentChars);
      const root = tracer.startSpan(
        call.name,
        { startTime: new Date(call.startTime), attributes: rootAttributes(call, content) },
        ROOT_CONTEXT,
      );
      const parent = trace.setSpan(ROOT_CONTEXT, root);
      for (const decision of call.guardrails) guardrailSpan(decision, call, parent);
      const generation = tracer.startSpan(
        `${call.operation} ${call.requestedModel}`,
        { startTime: new Date(call.startTime), attributes: generationAttributes(call, content) },
        parent,
      );
      endSpan(generation, call.endTime, call.status >= 500 ? call.errorMessage : undefined);
      endSpan(root, call.endTime, call.status >= 500 ? call.errorMessage : undefined);
    } catch (error) {
      log.warn({ err: error, requestId: call.requestId }, "could not record the call's trace");
    } finally {
      ids.next = undefined;
    }
  }

  function recordToolCall(call: ToolCallTrace): void {
    try {
      ids.next = call.traceId;
      const content = capturedContent(call, settings.capture, settings.maxContentChars);
      const failed = call.status >= 500 ? call.outcome : undefined;
      const root = tracer.startSpan(
        TOOL_CALL_TRACE_NAME,
        { startTime: new Date(call.startTime), attributes: toolRootAttributes(call, content) },
        ROOT_CONTEXT,
      );
      const parent = trace.setSpan(ROOT_CONTEXT, root);
      for (const decision of call.guardrails) guardrailSpan(decision, call, parent);
      const tool = tracer.startSpan(
        call.name,
        {
          startTime: new Date(call.startTime),
          attributes: createObservationAttributes("tool", {
            ...content,
            level: levelOf(call.status),
            statusMessage: failed,
            metadata: {
              mcp_server: call.mcpServer,
              tool: call.tool,
              status_code: call.status,
              status: call.outcome,
              cost_usd: call.costUsd,
            },
          }),
        },
        parent,
      );
      endSpan(tool, call.endTime, failed);
      endSpan(root, call.endTime, failed);
    } catch (error) {
      log.warn({ err: error, requestId: call.requestId }, "could not record the tool call's trace");
    } finally {
      ids.next = undefined;
    }
  }

  function guardrailSpan(
    decision: GuardDecision,
    call: { startTime: number; endTime: number },
    parent: typeof ROOT_CONTEXT,
  ): void {
    const start = decision.hook === "pre_call" ? call.startTime : call.endTime - decision.latencyMs;
    const span = tracer.startSpan(
      `guardrail ${decision.guardrail}`,
      {
        startTime: new Date(start),
        attributes: createObservationAttributes("guardrail", {
          level: decision.action === "block" ? "WARNING" : decision.action === "error" ? "ERROR" : "DEFAULT",
          statusMessage: decision.detail,
          output: {
            action: decision.action,
            mode: decision.mode,
            ...(decision.entities ? { entities: decision.entities } : {}),
            ...(decision.score !== undefined ? { score: decision.score } : {}),
          },
          metadata: { hook: decision.hook, latency_ms: decision.latencyMs },
        }),
      },
      parent,
    );
    span.end(new Date(start + decision.latencyMs));
  }

  return {
    record,
    recordToolCall,
    flush: () => provider.forceFlush(),
    async shutdown(timeoutMs: number) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), timeoutMs);
      });
      const outcome = await Promise.race([provider.forceFlush().then(() => "flushed" as const), timedOut]);
      clearTimeout(timer);
      const left = exporter.size;
      if (outcome === "timeout" || left > 0) {
        log.warn({ unsentSpans: left, host: settings.host }, "shutdown: trace spans left unsent");
      }
      await Promise.race([provider.shutdown(), new Promise((resolve) => setTimeout(resolve, 200))]);
    },
  };
}

function endSpan(span: Span, endTime: number, errorMessage: string | undefined): void {
  if (errorMessage !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage });
  span.end(new Date(endTime));
}

/** A call's captured input and output, serialised once for both spans that carry them. */
type Content = ReturnType<typeof capturedContent>;

function rootAttributes(call: CallTrace, content: Content): Attributes {
  const attributes: Attributes = {
    ...createTraceAttributes(content),
    ...createObservationAttributes("span", {
      ...content,
      level: levelOf(call.status),
      statusMessage: call.errorMessage,
    }),
    [LangfuseOtelSpanAttributes.TRACE_NAME]: call.name,
    [LangfuseOtelSpanAttributes.TRACE_TAGS]: call.tags,
    [`${LangfuseOtelSpanAttributes.TRACE_METADATA}.request_id`]: call.requestId,
    [`${LangfuseOtelSpanAttributes.TRACE_METADATA}.requested_model`]: call.requestedModel,
    [`${LangfuseOtelSpanAttributes.TRACE_METADATA}.status_code`]: String(call.status),
  };
  if (call.userId) attributes[LangfuseOtelSpanAttributes.TRACE_USER_ID] = call.userId;
  if (call.sessionId) attributes[LangfuseOtelSpanAttributes.TRACE_SESSION_ID] = call.sessionId;
  if (call.keyAlias) attributes[`${LangfuseOtelSpanAttributes.TRACE_METADATA}.key_alias`] = call.keyAlias;
  if (call.deploymentId)
    attributes[`${LangfuseOtelSpanAttributes.TRACE_METADATA}.model_id`] = call.deploymentId;
  if (call.errorType) attributes[`${LangfuseOtelSpanAttributes.TRACE_METADATA}.error_type`] = call.errorType;
  return attributes;
}

function toolRootAttributes(call: ToolCallTrace, content: Content): Attributes {
  const attributes: Attributes = {
    ...createTraceAttributes(content),
    ...createObservationAttributes("span", { ...content, level: levelOf(call.status) }),
    [LangfuseOtelSpanAttributes.TRACE_NAME]: TOOL_CALL_TRACE_NAME,
    [LangfuseOtelSpanAttributes.TRACE_TAGS]: ["mcp", call.mcpServer],
    [`${LangfuseOtelSpanAttributes.TRACE_METADATA}.request_id`]: call.requestId,
    [`${LangfuseOtelSpanAttributes.TRACE_METADATA}.mcp_server`]: call.mcpServer,
    [`${LangfuseOtelSpanAttributes.TRACE_METADATA}.status_code`]: String(call.status),
  };
  if (call.userId) attributes[LangfuseOtelSpanAttributes.TRACE_USER_ID] = call.userId;
  if (call.keyAlias) attributes[`${LangfuseOtelSpanAttributes.TRACE_METADATA}.key_alias`] = call.keyAlias;
  return attributes;
}

function generationAttributes(call: CallTrace, content: Content): Attributes {
  const modelParameters: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(call.modelParameters)) {
    modelParameters[k] = typeof v === "boolean" ? String(v) : v;
  }
  return createObservationAttributes("generation", {
    ...content,
    model: call.model ?? call.requestedModel,
    modelParameters,
    usageDetails: call.usage,
    costDetails: call.costUsd !== undefined ? { total: call.costUsd } : undefined,
    completionStartTime:
      call.completionStartTime !== undefined ? new Date(call.completionStartTime) : undefined,
    level: levelOf(call.status),
    statusMessage: call.errorMessage,
    metadata: { stream: call.stream, status_code: call.status, cache_hit: call.cacheHit },
  });
}

/** Langfuse levels: ERROR for the gateway's or upstream's failures, WARNING for refusals and 499. */
function levelOf(status: number): "DEFAULT" | "WARNING" | "ERROR" {
  if (status >= 500) return "ERROR";
  if (status >= 400) return "WARNING";
  return "DEFAULT";
}
