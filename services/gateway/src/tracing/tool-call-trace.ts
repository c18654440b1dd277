/**
 * What a finished MCP tool call (`/mcp` tools/call, `mcp/tool-call.ts`) tells the tracer: plain facts, like
 * {@link CallTrace} for model calls. Times are epoch ms, costs USD.
 */
import type { GuardDecision } from "../guardrails/types.js";
import type { CallTrace } from "./call-trace.js";

/** The trace's and its root span's name for every tools/call (the MCP method, dotted like the model routes'). */
export const TOOL_CALL_TRACE_NAME = "mcp.tools.call";

/**
 * One tools/call, finished (answered, refused, or failed). Its trace id, request id, times, user and key alias
 * mean what they mean on a model call's {@link CallTrace} (the trace id is the HTTP request's).
 */
export interface ToolCallTrace
  extends Pick<CallTrace, "traceId" | "requestId" | "startTime" | "endTime" | "userId" | "keyAlias"> {
  /** The MCP server's config name (`mcp_servers:`). */
  mcpServer: string;
  /** The tool's upstream name. */
  tool: string;
  /** The name the caller called, `<server>-<tool>`: the tool observation's name. */
  name: string;
  /** The arguments as the caller sent them and as they went upstream (after the input guardrails). */
  input: CallTrace["input"];
  /** The result as the caller got it (after the output guard); absent when there was none. */
  output?: { returned: unknown };
  /** The server's cost per query charged, USD (0 when the upstream was not reached). */
  costUsd: number;
  /** The spend row's status: 200, or the refusal's or failure's HTTP-like status. */
  status: number;
  /** The metric status (`gateway_mcp_tool_calls_total`'s `status` label: `success`, `tool_error`, …). */
  outcome: string;
  /** Guardrail decisions, input then output: each becomes a child observation of type `guardrail`. */
  guardrails: readonly GuardDecision[];
}

/** Records finished tool calls as traces (the Langfuse tracer, `langfuse-tracer.ts`). */
export interface ToolCallTracer {
  /** Queues the trace of a finished tool call; never throws, never waits. */
  recordToolCall(call: ToolCallTrace): void;
}
