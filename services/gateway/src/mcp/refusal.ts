/**
 * A gateway refusal on `/mcp` (rate limit, budget, guardrail: a {@link GatewayError}) as the JSON-RPC error the
 * caller gets. The code is in JSON-RPC's implementation-defined server-error range (-32000 to -32099); `data`
 * carries the HTTP status, `type` and `code` the model routes answer with, and `retry_after` (seconds) when
 * the refusal has one.
 */
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { GatewayError } from "../errors/gateway-error.js";

/** JSON-RPC error code of a gateway refusal (rate limit, budget, guardrail): the implementation-defined range. */
export const GATEWAY_REFUSAL_CODE = -32003;

/** `error` as an McpError {@link GATEWAY_REFUSAL_CODE} with `{status, type, code, retry_after?}` in `data`. */
export function refusalError(error: GatewayError): McpError {
  return new McpError(GATEWAY_REFUSAL_CODE, error.message, {
    status: error.status,
    type: error.type,
    code: error.code,
    ...(error.headers["retry-after"] === undefined
      ? {}
      : { retry_after: Number(error.headers["retry-after"]) }),
  });
}
