/**
 * MCP metrics on the gateway's registry. Label values are bounded: `mcp_server` is a server declared in the
 * config, `tool` a tool that server listed and the caller was allowed (a name the caller made up is refused
 * before it is counted), `status` one of `success`, `tool_error` (the tool's result has `isError`), `truncated` (the result was over the server's
 * `max_result_bytes`),
 * `invalid_arguments`, `rate_limited`, `blocked` (a guardrail), `timeout`, `unreachable`, `upstream_error`.
 */
import { Counter, Histogram, type Registry } from "prom-client";

/** The outcome label of one tools/call. */
export type ToolCallStatus =
  | "success"
  | "tool_error"
  | "truncated"
  | "invalid_arguments"
  | "rate_limited"
  | "blocked"
  | "timeout"
  | "unreachable"
  | "upstream_error";

/** The MCP tool-call metrics. */
export interface McpMetrics {
  /** `gateway_mcp_tool_calls_total` (labels: mcp_server, tool, status). */
  calls: Counter<"mcp_server" | "tool" | "status">;
  /** `gateway_mcp_tool_call_duration_seconds`: from the call's arrival to its answer (labels: mcp_server, tool). */
  duration: Histogram<"mcp_server" | "tool">;
}

/** The MCP metrics of `registry`, registered on first use (several gateways in one process may share one). */
export function mcpMetrics(registry: Registry): McpMetrics {
  const calls =
    (registry.getSingleMetric("gateway_mcp_tool_calls_total") as McpMetrics["calls"] | undefined) ??
    new Counter({
      name: "gateway_mcp_tool_calls_total",
      help: "MCP tools/call requests through /mcp, by upstream server, tool and outcome",
      labelNames: ["mcp_server", "tool", "status"] as const,
      registers: [registry],
    });
  const duration =
    (registry.getSingleMetric("gateway_mcp_tool_call_duration_seconds") as
      | McpMetrics["duration"]
      | undefined) ??
    new Histogram({
      name: "gateway_mcp_tool_call_duration_seconds",
      help: "MCP tools/call through /mcp, from arrival to answer, seconds",
      labelNames: ["mcp_server", "tool"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
  return { calls, duration };
}
