/**
 * The gateway's MCP server listing for operators: `GET /v1/mcp/server` (LiteLLM's route of that name, its MCP
 * management endpoints; master key only). Grants themselves are `object_permission` on keys and teams
 * (`fields.ts`).
 */
import { z } from "zod";

/** One tool of a server, under the name callers list and call: `<server>-<tool>` (LiteLLM's prefix). */
export const listedMcpTool = z.looseObject({ name: z.string(), description: z.string().optional() });

/**
 * One declared MCP server: its name (`server_id` = `server_name`, the key under `mcp_servers:`), transport,
 * where it is (`url` without user-info or query, or a stdio server's `command`), `allow_all_keys`, the config's
 * tool filters, its cost per call (USD), whether its tools could be listed (`status`, `health_check_error`) and
 * its tools. Never a credential, header or env value.
 */
export const listedMcpServer = z.looseObject({
  server_id: z.string(),
  server_name: z.string(),
  description: z.string().nullable(),
  transport: z.enum(["http", "sse", "stdio"]),
  url: z.string().optional(),
  command: z.string().optional(),
  allow_all_keys: z.boolean(),
  allowed_tools: z.array(z.string()).nullable(),
  disallowed_tools: z.array(z.string()),
  mcp_info: z.looseObject({
    mcp_server_cost_info: z.looseObject({
      default_cost_per_query: z.number(),
      tool_name_to_cost_per_query: z.record(z.string(), z.number()),
    }),
  }),
  status: z.enum(["healthy", "unhealthy"]),
  health_check_error: z.string().optional(),
  tools: z.array(listedMcpTool),
});
export type ListedMcpServer = z.infer<typeof listedMcpServer>;

/** `GET /v1/mcp/server`: the declared servers in config order. */
export const mcpServerListResponse = z.array(listedMcpServer);

/** A listed tool's own (upstream) name: its `<server>-` prefix removed, as `mcp_tool_permissions` names it. */
export function ownToolName(server: string, listedName: string): string {
  return listedName.startsWith(`${server}-`) ? listedName.slice(server.length + 1) : listedName;
}
