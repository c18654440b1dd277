/**
 * One `tools/call` through `/mcp`, in the order of the model pipeline's steps:
 *
 * 1. find: the prefixed name must be a tool the caller may use (`tools.ts`); any other name gets the same
 *    "unknown tool" error, whether the tool does not exist or is not the caller's, and reaches no upstream;
 * 2. validate: the arguments against the tool's `inputSchema` (JSON Schema, the SDK's Ajv validator): invalid
 *    arguments get JSON-RPC InvalidParams and are not forwarded;
 * 3. admit: the pipeline's admit step (`admitAs`, `pipeline/steps/admit.ts`): the rpm limits of the key and of
 *    its user, or of its team and membership, count the call, and the server's cost per query is reserved
 *    against their budgets (0 tokens, like `count_tokens`);
 * 4. guard input: the pipeline's guard-input step over the arguments (PII mask or block, prompt injection by
 *    policy);
 * 5. call the upstream (its timeout; an unreachable or slow server is a clear error, not a hang); a result
 *    over the server's size limit is cut, with a marker (`result-size.ts`);
 * 6. guard output: the output guard over the result's texts (mask or block);
 * 7. account: the admission settled at the server's cost per query (`mcp_info.mcp_server_cost_info`), a
 *    spend-log row (`call_type` `call_mcp_tool`, LiteLLM's: `model_group` the server, `model` the prefixed tool
 *    name), the MCP metrics, and a trace (`tracing/tool-call-trace.ts`) when tracing is on.
 *
 * Errors reach the caller as JSON-RPC errors ({@link McpError}); a gateway refusal (429, a guardrail's block)
 * carries its HTTP status, type and code in `data`.
 */

import { type CallToolResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { FastifyBaseLogger } from "fastify";
import { callerColumns } from "../accounting/call-accounting.js";
import type { AuthContext } from "../auth/types.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { GuardCall, GuardOutcome, TextExtractor } from "../guardrails/types.js";
import type { Admission, Admitter } from "../limits/types.js";
import { admitAs } from "../pipeline/steps/admit.js";
import { guardInput } from "../pipeline/steps/guard-input.js";
import type { SpendRecorder } from "../spend/types.js";
import type { Clock } from "../time/clock.js";
import type { ToolCallTrace, ToolCallTracer } from "../tracing/tool-call-trace.js";
import type { McpMetrics, ToolCallStatus } from "./metrics.js";
import { GATEWAY_REFUSAL_CODE, refusalError } from "./refusal.js";
import { limitResultSize } from "./result-size.js";
import { type ToolCallBody, toolArgumentTexts, toolResultTexts } from "./texts.js";
import { findTool, type OfferedTool } from "./tools.js";
import { type McpUpstream, McpUpstreamError } from "./upstream.js";

/** LiteLLM's `call_type` of an MCP tool call (`CallTypes.call_mcp_tool`). */
export const MCP_CALL_TYPE = "call_mcp_tool";

/** The guardrails a tool call runs (the gateway's GuardrailEngine). */
export interface McpGuard {
  checkInput(call: GuardCall, texts: TextExtractor): Promise<GuardOutcome>;
  checkOutput(call: GuardCall, answer: unknown, texts: TextExtractor): Promise<GuardOutcome>;
}

/** What a tool call is run with. */
export interface ToolCallDeps {
  upstreams: readonly McpUpstream[];
  admitter: Admitter | undefined;
  guard: McpGuard | undefined;
  spend: SpendRecorder | undefined;
  metrics: McpMetrics;
  /** A trace per call (Langfuse), when tracing is configured. */
  tracer?: ToolCallTracer;
  clock: Clock;
  log: FastifyBaseLogger;
}

/** One caller's tools/call request. */
export interface ToolCallRequest {
  auth: AuthContext;
  /** The HTTP request's id (`x-request-id`) and the JSON-RPC id: the spend row's request id. */
  requestId: string;
  /**
   * The call's trace id: the HTTP request id's 32 hex digits (`traceIdFor`), as on the model routes (one POST
   * carries one JSON-RPC request: the protocol has no batches since 2025-06-18).
   */
  traceId: string;
  /** The prefixed tool name. */
  name: string;
  arguments: Record<string, unknown>;
  signal?: AbortSignal;
}

const validators = new AjvJsonSchemaValidator();

/**
 * Runs one tools/call (see the module comment).
 * @returns the upstream's result, after the output guard (a tool's own failure is a result with `isError`).
 * @throws McpError InvalidParams for an unknown or forbidden tool or invalid arguments; {@link GATEWAY_REFUSAL_CODE}
 *   for a rate limit, budget or guardrail refusal; InternalError for an unreachable, failing or slow upstream.
 */
export async function callTool(deps: ToolCallDeps, request: ToolCallRequest): Promise<CallToolResult> {
  const startedAt = performance.now();
  const startedAtEpoch = deps.clock.now();
  const offered = await findOffered(deps, request);
  const server = offered.upstream.config;
  const costPerQuery = server.toolCostPerQuery[offered.tool.name] ?? server.defaultCostPerQuery;
  let status: ToolCallStatus = "success";
  let httpStatus = 200;
  let charged = 0;
  /** The upstream answered: the call is settled at its cost, else released. */
  let reached = false;
  let admission: Admission | undefined;
  let returned: CallToolResult | undefined;
  // The guarded call, as the pipeline's guard-input step reads it: the arguments the upstream will get.
  const guardCall: GuardCall & { body: ToolCallBody } = {
    // A copy: the guard masks in place, and the trace keeps what the caller sent.
    body: { arguments: structuredClone(request.arguments) },
    auth: request.auth,
    decisions: [],
  };
  try {
    validateArguments(offered, request.arguments);
    // The model routes' admission (pipeline/steps/admit.ts): the key's, user's and team's rpm, and the
    // server's cost per query reserved against their budgets; 0 tokens.
    admission = await admitAs(request.auth, deps.admitter, {
      model: `mcp/${server.name}`,
      estimatedCost: costPerQuery,
      estimatedTokens: 0,
    });
    await guardInput(guardCall, deps.guard, toolArgumentTexts);
    const answered = await offered.upstream.callTool(
      offered.tool.name,
      guardCall.body.arguments,
      request.signal,
    );
    charged = costPerQuery;
    reached = true;
    const { result, truncated } = limitResultSize(answered, server.maxResultBytes, server.name);
    if (truncated) status = "truncated";
    else if (result.isError === true) status = "tool_error";
    if (deps.guard !== undefined) {
      const outcome = await deps.guard.checkOutput(guardCall, result, toolResultTexts);
      guardCall.decisions.push(...outcome.decisions);
    }
    returned = result;
    return result;
  } catch (error) {
    ({ status, httpStatus } = outcomeOf(error));
    throw toMcpError(error);
  } finally {
    // Settled at the cost of an upstream call that answered; released (nothing spent) otherwise.
    if (reached) {
      admission?.settle({ cost: charged, totalTokens: 0 });
    } else {
      admission?.release();
    }
    const durationS = (performance.now() - startedAt) / 1000;
    deps.metrics.calls.inc({ mcp_server: server.name, tool: offered.tool.name, status });
    deps.metrics.duration.observe({ mcp_server: server.name, tool: offered.tool.name }, durationS);
    const outcome = { startedAtEpoch, endedAtEpoch: deps.clock.now(), status: httpStatus, cost: charged };
    record(deps, request, offered, outcome);
    deps.tracer?.recordToolCall({
      ...traceFacts(request, offered),
      startTime: startedAtEpoch,
      endTime: outcome.endedAtEpoch,
      input: { original: request.arguments, sent: guardCall.body.arguments },
      ...(returned === undefined ? {} : { output: { returned } }),
      costUsd: charged,
      status: httpStatus,
      outcome: status,
      guardrails: guardCall.decisions,
    });
  }
}

/** The offered tool the request names. @throws McpError InvalidParams when the caller has no such tool. */
async function findOffered(deps: ToolCallDeps, request: ToolCallRequest): Promise<OfferedTool> {
  let found: OfferedTool | undefined;
  try {
    found = await findTool(deps.upstreams, request.auth, request.name);
  } catch (error) {
    throw toMcpError(error);
  }
  if (found === undefined) {
    throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.name.slice(0, 200)}`);
  }
  return found;
}

/** @throws McpError InvalidParams naming what is wrong with the arguments (never their values). */
function validateArguments(offered: OfferedTool, args: Record<string, unknown>): void {
  const check = validators.getValidator(
    offered.tool.inputSchema as Parameters<typeof validators.getValidator>[0],
  );
  const verdict = check(args);
  if (!verdict.valid) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Invalid arguments for tool ${offered.name}: ${verdict.errorMessage}`,
    );
  }
}

/** The metric status and HTTP-like status of a failed call. */
function outcomeOf(error: unknown): { status: ToolCallStatus; httpStatus: number } {
  if (error instanceof McpUpstreamError) {
    return { status: error.reason, httpStatus: error.reason === "timeout" ? 504 : 502 };
  }
  if (error instanceof GatewayError) {
    const status: ToolCallStatus = error.status === 429 ? "rate_limited" : "blocked";
    return { status, httpStatus: error.status };
  }
  if (error instanceof McpError && error.code === ErrorCode.InvalidParams) {
    return { status: "invalid_arguments", httpStatus: 400 };
  }
  return { status: "upstream_error", httpStatus: 502 };
}

/** The JSON-RPC error a caller gets for `error`. */
function toMcpError(error: unknown): McpError {
  if (error instanceof McpError) return error;
  if (error instanceof McpUpstreamError) return error.toMcpError();
  if (error instanceof GatewayError) return refusalError(error);
  return new McpError(ErrorCode.InternalError, "The MCP tool call failed in the gateway.");
}

/** The call's spend-log row. */
function record(
  deps: ToolCallDeps,
  request: ToolCallRequest,
  offered: OfferedTool,
  outcome: { startedAtEpoch: number; endedAtEpoch: number; status: number; cost: number },
): void {
  deps.spend?.record({
    requestId: request.requestId,
    ...callerColumns(request.auth),
    modelGroup: offered.upstream.config.name,
    model: offered.name,
    deploymentId: null,
    promptTokens: 0,
    completionTokens: 0,
    totalTokens: 0,
    spend: outcome.cost,
    startTime: outcome.startedAtEpoch,
    endTime: outcome.endedAtEpoch,
    status: outcome.status,
    stream: false,
    callType: MCP_CALL_TYPE,
  });
}

/** The trace's facts about who called which tool. */
function traceFacts(
  request: ToolCallRequest,
  offered: OfferedTool,
): Pick<ToolCallTrace, "traceId" | "requestId" | "userId" | "keyAlias" | "mcpServer" | "tool" | "name"> {
  const { auth } = request;
  return {
    traceId: request.traceId,
    requestId: request.requestId,
    ...(auth.kind === "virtual" && auth.userId ? { userId: auth.userId } : {}),
    ...(auth.kind === "virtual" && auth.keyAlias ? { keyAlias: auth.keyAlias } : {}),
    mcpServer: offered.upstream.config.name,
    tool: offered.tool.name,
    name: offered.name,
  };
}
