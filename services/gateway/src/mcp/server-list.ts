/**
 * `GET /v1/mcp/server` (LiteLLM's MCP server listing, its `mcp_management_endpoints`; master key only): every
 * server declared under `mcp_servers:` with its tools, for operators (the key console's MCP page and its
 * grant field). An array, one entry per server in file order:
 *
 *     {server_id, server_name, description, transport: "http" | "sse" | "stdio",
 *      url?,                 // http/sse: scheme, host, port and path only (no user-info, no query string)
 *      command?,             // stdio: the program only (never its args or env)
 *      allow_all_keys, allowed_tools, disallowed_tools,
 *      mcp_info: {mcp_server_cost_info: {default_cost_per_query, tool_name_to_cost_per_query}},  // USD per call
 *      status: "healthy" | "unhealthy", health_check_error?,
 *      tools: [{name: "<server>-<tool>", description?}]}   // the names callers list and call
 *
 * `server_id` is the server's name (servers come from the config, not a database). Upstream credentials
 * (`auth_value`, headers, `env`, URL query values) are never part of the answer. A server that cannot be listed
 * is `unhealthy` with the gateway's own safe message (no URL or credential) and no tools; the others still answer.
 */
import type { FastifyInstance } from "fastify";
import { requireMaster } from "../auth/require-master.js";
import { prefixedName } from "./reachable.js";
import { type McpUpstream, McpUpstreamError } from "./upstream.js";

/** One server as `GET /v1/mcp/server` lists it (the module's docstring gives the shape). */
export interface ListedMcpServer {
  server_id: string;
  server_name: string;
  description: string | null;
  transport: "http" | "sse" | "stdio";
  url?: string;
  command?: string;
  allow_all_keys: boolean;
  allowed_tools: string[] | null;
  disallowed_tools: string[];
  mcp_info: {
    mcp_server_cost_info: {
      default_cost_per_query: number;
      tool_name_to_cost_per_query: Record<string, number>;
    };
  };
  status: "healthy" | "unhealthy";
  health_check_error?: string;
  tools: Array<{ name: string; description?: string }>;
}

/** A URL as operators may see it: scheme, host, port and path; user-info and the query string dropped. */
export function publicUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

/** One upstream's listing entry; its tools listed (cached, `upstream.ts`) or the reason they could not be. */
async function listServer(upstream: McpUpstream): Promise<ListedMcpServer> {
  const config = upstream.config;
  const t = config.transport;
  const entry: ListedMcpServer = {
    server_id: config.name,
    server_name: config.name,
    description: config.description ?? null,
    transport: t.kind,
    ...(t.kind === "stdio" ? { command: t.command } : { url: publicUrl(t.url) }),
    allow_all_keys: config.allowAllKeys,
    allowed_tools: config.allowedTools ?? null,
    disallowed_tools: config.disallowedTools,
    mcp_info: {
      mcp_server_cost_info: {
        default_cost_per_query: config.defaultCostPerQuery,
        tool_name_to_cost_per_query: config.toolCostPerQuery,
      },
    },
    status: "healthy",
    tools: [],
  };
  try {
    entry.tools = (await upstream.tools()).map((tool) => ({
      name: prefixedName(upstream, tool.name),
      ...(tool.description === undefined ? {} : { description: tool.description }),
    }));
  } catch (error) {
    entry.status = "unhealthy";
    // McpUpstreamError messages are written for callers (no URL, header or credential); nothing else is shown.
    entry.health_check_error =
      error instanceof McpUpstreamError ? error.message : `MCP server ${config.name} could not be listed.`;
  }
  return entry;
}

/** Registers `GET /v1/mcp/server` over the declared upstreams. */
export async function mcpServerListRoutes(
  app: FastifyInstance,
  options: { upstreams: readonly McpUpstream[] },
): Promise<void> {
  app.get("/v1/mcp/server", async (request) => {
    requireMaster(request);
    return Promise.all(options.upstreams.map(listServer));
  });
}
