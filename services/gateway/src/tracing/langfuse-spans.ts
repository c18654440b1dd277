/**
 * Langfuse's OpenTelemetry attribute mapping of a finished call, done once per call straight into OTLP JSON
 * span texts (`otlp-json.ts`). The attributes, their order and their encoding are those `@langfuse/tracing`'s
 * `createTraceAttributes`/`createObservationAttributes` and `@langfuse/otel`'s span processor produced for the
 * same call (`langfuse.observation.*`, `langfuse.trace.*`, `user.id`, `session.id`,
 * `langfuse.internal.is_app_root`; objects as JSON text, metadata values as text), which
 * test/services/gateway/tracing/otlp-wire.test.ts holds this module to. The attribute names come from
 * `@langfuse/tracing`'s `LangfuseOtelSpanAttributes`.
 *
 * The captured input and output are serialised once (`capturedContent`) and escaped once: the root span
 * carries them as the trace's and its own input/output, the generation (or tool observation) as its own.
 */
import { LangfuseOtelSpanAttributes as A } from "@langfuse/tracing";
import type { CaptureContent } from "../config/trace-settings.js";
import type { GuardDecision } from "../guardrails/types.js";
import { type CallTrace, capturedContent } from "./call-trace.js";
import { AttributeList, type ExportScope, randomSpanId, type SpanFacts, spanJson } from "./otlp-json.js";
import { TOOL_CALL_TRACE_NAME, type ToolCallTrace } from "./tool-call-trace.js";

/** What the content of a trace is cut to. */
export interface ContentOptions {
  capture: CaptureContent;
  /** Longest input or output text kept, characters. */
  maxContentChars: number;
}

/**
 * A call's facts with its input and output already captured and cut (`capturedContent`: JSON text, absent when
 * not captured): what the spans are built from, and what is posted to the trace thread (small, plain data).
 */
export type CallFacts = Omit<CallTrace, "input" | "output"> & { input?: string; output?: string };
/** A tool call's facts, captured like {@link CallFacts}. */
export type ToolCallFacts = Omit<ToolCallTrace, "input" | "output"> & { input?: string; output?: string };

/** The facts of a call (model or tool call) under the capture options: the one JSON serialisation of its content. */
export function factsOf<T extends CallTrace | ToolCallTrace>(
  call: T,
  options: ContentOptions,
): Omit<T, "input" | "output"> & { input?: string; output?: string } {
  const { input, output } = capturedContent(call, options.capture, options.maxContentChars);
  return { ...call, input, output };
}

/**
 * The resource and scope of every span: what the OpenTelemetry SDK's default resource and our tracer's name
 * were when Langfuse's SDK sent our traces (Langfuse keeps them as the observation's resource and scope).
 */
export const EXPORT_SCOPE: ExportScope = {
  resource: {
    "service.name": `unknown_service:${process.argv0}`,
    "telemetry.sdk.language": "nodejs",
    "telemetry.sdk.name": "opentelemetry",
    "telemetry.sdk.version": "2.12.1",
  },
  scope: "ai-gateway",
};

type Level = "DEFAULT" | "WARNING" | "ERROR";

/**
 * Langfuse's environment and release of every span (`langfuse.environment`, `langfuse.release`), from
 * `LANGFUSE_TRACING_ENVIRONMENT` and `LANGFUSE_RELEASE` as `@langfuse/otel`'s span processor read them.
 */
export interface SpanTags {
  environment?: string;
  release?: string;
}

/** A span's JSON text with the tags added last (left out when unset, as the SDK's `setAttributes` does). */
function taggedSpan(span: SpanFacts, tags: SpanTags): string {
  span.attributes.add(A.ENVIRONMENT, tags.environment).add(A.RELEASE, tags.release);
  return spanJson(span);
}

/** A call's input and output as JSON string literals (escaped once), absent when not captured. */
interface QuotedContent {
  input?: string;
  output?: string;
}

function quotedContent(call: { input?: string; output?: string }): QuotedContent {
  return {
    input: typeof call.input === "string" ? JSON.stringify(call.input) : undefined,
    output: typeof call.output === "string" ? JSON.stringify(call.output) : undefined,
  };
}

/** The leading attributes every observation has (`createObservationAttributes`' first ones, in its order). */
function observation(type: string, level: Level, statusMessage: string | undefined, content?: QuotedContent) {
  return new AttributeList()
    .add(A.OBSERVATION_TYPE, type)
    .add(A.OBSERVATION_LEVEL, level)
    .add(A.OBSERVATION_STATUS_MESSAGE, statusMessage)
    .addQuoted(A.OBSERVATION_INPUT, content?.input)
    .addQuoted(A.OBSERVATION_OUTPUT, content?.output);
}

/** Observation metadata, `langfuse.observation.metadata.<key>`: text as is, the rest as JSON; empty text left out. */
function addMetadata(list: AttributeList, metadata: Record<string, unknown>): AttributeList {
  for (const [key, value] of Object.entries(metadata)) {
    const text = typeof value === "string" ? value : value == null ? undefined : JSON.stringify(value);
    if (text) list.add(`${A.OBSERVATION_METADATA}.${key}`, text);
  }
  return list;
}

/** The root span's trace input/output and own observation attributes. */
function rootStart(level: Level, statusMessage: string | undefined, content: QuotedContent): AttributeList {
  return new AttributeList()
    .addQuoted(A.TRACE_INPUT, content.input)
    .addQuoted(A.TRACE_OUTPUT, content.output)
    .add(A.OBSERVATION_TYPE, "span")
    .add(A.OBSERVATION_LEVEL, level)
    .add(A.OBSERVATION_STATUS_MESSAGE, statusMessage)
    .addQuoted(A.OBSERVATION_INPUT, content.input)
    .addQuoted(A.OBSERVATION_OUTPUT, content.output);
}

/**
 * The spans of a model call as OTLP JSON texts, children first (guardrails, the generation), the root last:
 * see langfuse-tracer.ts for what a trace holds.
 */
export function callSpans(call: CallFacts, tags: SpanTags = {}): string[] {
  const content = quotedContent(call);
  const level = levelOf(call.status);
  const failed = call.status >= 500 ? call.errorMessage : undefined;
  const rootId = randomSpanId();
  const spans = call.guardrails.map((decision) => guardrailSpan(decision, call, rootId, tags));

  const modelParameters: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(call.modelParameters)) {
    modelParameters[k] = typeof v === "boolean" ? String(v) : v;
  }
  const generation = observation("generation", level, call.errorMessage, content)
    .add(A.OBSERVATION_MODEL, call.model ?? call.requestedModel)
    .add(A.OBSERVATION_USAGE_DETAILS, call.usage === undefined ? undefined : JSON.stringify(call.usage))
    .add(
      A.OBSERVATION_COST_DETAILS,
      call.costUsd === undefined ? undefined : JSON.stringify({ total: call.costUsd }),
    )
    .add(
      A.OBSERVATION_COMPLETION_START_TIME,
      call.completionStartTime === undefined ? undefined : JSON.stringify(new Date(call.completionStartTime)),
    )
    .add(A.OBSERVATION_MODEL_PARAMETERS, JSON.stringify(modelParameters));
  addMetadata(generation, { stream: call.stream, status_code: call.status, cache_hit: call.cacheHit });
  spans.push(
    taggedSpan(
      {
        traceId: call.traceId,
        spanId: randomSpanId(),
        parentSpanId: rootId,
        name: `${call.operation} ${call.requestedModel}`,
        startMs: call.startTime,
        endMs: call.endTime,
        attributes: generation,
        errorMessage: failed,
      },
      tags,
    ),
  );

  const root = rootStart(level, call.errorMessage, content)
    .add(A.TRACE_NAME, call.name)
    .add(A.TRACE_TAGS, call.tags)
    .add(`${A.TRACE_METADATA}.request_id`, call.requestId)
    .add(`${A.TRACE_METADATA}.requested_model`, call.requestedModel)
    .add(`${A.TRACE_METADATA}.status_code`, String(call.status))
    .add(A.TRACE_USER_ID, call.userId || undefined)
    .add(A.TRACE_SESSION_ID, call.sessionId || undefined)
    .add(`${A.TRACE_METADATA}.key_alias`, call.keyAlias || undefined)
    .add(`${A.TRACE_METADATA}.model_id`, call.deploymentId || undefined)
    .add(`${A.TRACE_METADATA}.error_type`, call.errorType || undefined)
    .add(A.IS_APP_ROOT, true);
  spans.push(rootSpan(call, call.name, rootId, root, failed, tags));
  return spans;
}

/** The spans of an MCP tool call as OTLP JSON texts, children first, the root last. */
export function toolCallSpans(call: ToolCallFacts, tags: SpanTags = {}): string[] {
  const content = quotedContent(call);
  const level = levelOf(call.status);
  const failed = call.status >= 500 ? call.outcome : undefined;
  const rootId = randomSpanId();
  const spans = call.guardrails.map((decision) => guardrailSpan(decision, call, rootId, tags));
  const tool = addMetadata(observation("tool", level, failed, content), {
    mcp_server: call.mcpServer,
    tool: call.tool,
    status_code: call.status,
    status: call.outcome,
    cost_usd: call.costUsd,
  });
  spans.push(
    taggedSpan(
      {
        traceId: call.traceId,
        spanId: randomSpanId(),
        parentSpanId: rootId,
        name: call.name,
        startMs: call.startTime,
        endMs: call.endTime,
        attributes: tool,
        errorMessage: failed,
      },
      tags,
    ),
  );
  const root = rootStart(level, undefined, content)
    .add(A.TRACE_NAME, TOOL_CALL_TRACE_NAME)
    .add(A.TRACE_TAGS, ["mcp", call.mcpServer])
    .add(`${A.TRACE_METADATA}.request_id`, call.requestId)
    .add(`${A.TRACE_METADATA}.mcp_server`, call.mcpServer)
    .add(`${A.TRACE_METADATA}.status_code`, String(call.status))
    .add(A.TRACE_USER_ID, call.userId || undefined)
    .add(`${A.TRACE_METADATA}.key_alias`, call.keyAlias || undefined)
    .add(A.IS_APP_ROOT, true);
  spans.push(rootSpan(call, TOOL_CALL_TRACE_NAME, rootId, root, failed, tags));
  return spans;
}

function rootSpan(
  call: { traceId: string; startTime: number; endTime: number },
  name: string,
  spanId: string,
  attributes: AttributeList,
  errorMessage: string | undefined,
  tags: SpanTags,
): string {
  return taggedSpan(
    {
      traceId: call.traceId,
      spanId,
      name,
      startMs: call.startTime,
      endMs: call.endTime,
      attributes,
      errorMessage,
    },
    tags,
  );
}

/** A guardrail decision's observation: from the call's start (input) or its end minus the latency (output). */
function guardrailSpan(
  decision: GuardDecision,
  call: { traceId: string; startTime: number; endTime: number },
  parentSpanId: string,
  tags: SpanTags,
): string {
  const start = decision.hook === "pre_call" ? call.startTime : call.endTime - decision.latencyMs;
  const level: Level =
    decision.action === "block" ? "WARNING" : decision.action === "error" ? "ERROR" : "DEFAULT";
  const output = JSON.stringify({
    action: decision.action,
    mode: decision.mode,
    ...(decision.entities ? { entities: decision.entities } : {}),
    ...(decision.score !== undefined ? { score: decision.score } : {}),
  });
  const attributes = observation("guardrail", level, decision.detail).add(A.OBSERVATION_OUTPUT, output);
  addMetadata(attributes, { hook: decision.hook, latency_ms: decision.latencyMs });
  return taggedSpan(
    {
      traceId: call.traceId,
      spanId: randomSpanId(),
      parentSpanId,
      name: `guardrail ${decision.guardrail}`,
      startMs: start,
      endMs: start + decision.latencyMs,
      attributes,
    },
    tags,
  );
}

/** Langfuse levels: ERROR for the gateway's or upstream's failures, WARNING for refusals and 499. */
function levelOf(status: number): Level {
  if (status >= 500) return "ERROR";
  if (status >= 400) return "WARNING";
  return "DEFAULT";
}
