/**
 * The MCP gateway (`/mcp`): upstream MCP servers declared under `mcp_servers:` in the config (`config.ts`),
 * offered to callers under their virtual keys with the same rate limits, budgets, guardrails, spend logs and
 * metrics as the model routes. docs/mcp.md describes it for operators.
 */
import type { FastifyBaseLogger } from "fastify";
import type { McpServerConfig } from "../config/mcp-servers.js";
import { McpUpstream } from "./upstream.js";

export type { McpServerConfig } from "../config/mcp-servers.js";
export { mcpRoutes } from "./route.js";
export { type ListedMcpServer, mcpServerListRoutes } from "./server-list.js";
export type { McpGuard } from "./tool-call.js";
export { McpUpstream } from "./upstream.js";

/** The gateway's upstream MCP servers and their shutdown. */
export interface McpUpstreams {
  upstreams: McpUpstream[];
  /** Closes every connection (stdio servers' processes end). Never throws. */
  close(): Promise<void>;
}

/**
 * One {@link McpUpstream} per declared server. Nothing connects yet: each connects on its first use, so a
 * server that is down does not hold up the gateway's start.
 */
export function createMcpUpstreams(
  servers: readonly McpServerConfig[],
  log: FastifyBaseLogger,
): McpUpstreams {
  const upstreams = servers.map((s) => new McpUpstream(s, log));
  return {
    upstreams,
    close: async () => {
      await Promise.all(upstreams.map((u) => u.close()));
    },
  };
}
