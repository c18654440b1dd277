/**
 * A tool call through the gateway's `/mcp` to the operator's MCP server (../operator.ts OPERATOR_MCP_SERVER,
 * declared under `mcp_servers:` in the operator's litellm/config.yaml): a virtual key granted that server
 * (`object_permission.mcp_servers`) lists its tools under `<server>-<tool>` and calls one with the official
 * SDK's client over Streamable HTTP, as LibreChat's `mcpServers` entry does (infra/chat.ts); the call must come
 * back with the server's answer and be booked in `spend_logs` (`call_type` `call_mcp_tool`, the server's cost
 * per query), where the gateway's spend writer puts it within its flush interval.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { OPERATOR_MCP_SERVER } from "../operator.js";
import { gatewayOf, makeKey, type StackAccess, sql } from "./access.js";

/** What the check saw. */
export interface McpToolCallOutcome {
  /** The tools the key listed, as named to callers. */
  tools: string[];
  /** The text of the echo tool's answer. */
  answer: string;
  /** The key's spend rows of MCP tool calls: `model_group|model|status|spend` each. */
  rows: string[];
}

/**
 * Makes the key, lists and calls `<server>-echo` through `/mcp`, then waits (up to `settleMs`) for its spend
 * row.
 * @throws Error when the key cannot be made or the gateway refuses the connection or the call.
 */
export async function toolCallThroughGateway(
  access: StackAccess,
  settleMs = 30_000,
): Promise<McpToolCallOutcome> {
  const { stack, log } = access;
  const alias = `mcp-tool-call-${Date.now()}`;
  const key = await makeKey(stack, alias, { object_permission: { mcp_servers: [OPERATOR_MCP_SERVER.name] } });
  const client = new Client({ name: "stack-rehearsal", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gatewayOf(stack).url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  let tools: string[];
  let answer: string;
  try {
    tools = (await client.listTools()).tools.map((t) => t.name).sort();
    log(`mcp: the key lists ${tools.join(", ")}`);
    const result = await client.callTool({
      name: `${OPERATOR_MCP_SERVER.name}-echo`,
      arguments: { text: "from the rehearsal" },
    });
    const content = result.content as Array<{ type: string; text?: string }>;
    answer = content.map((c) => c.text ?? "").join("");
  } finally {
    await client.close();
  }
  const quoted = `'${alias.replaceAll("'", "''")}'`;
  const query = `SELECT model_group || '|' || model || '|' || status || '|' || spend::float8 FROM spend_logs WHERE key_alias = ${quoted} AND call_type = 'call_mcp_tool'`;
  let rows: string[] = [];
  for (const deadline = Date.now() + settleMs; Date.now() < deadline; await sleep(1000)) {
    rows = sql(access, query)
      .split("\n")
      .filter((line) => line !== "");
    if (rows.length > 0) break;
  }
  return { tools, answer, rows };
}
