/**
 * Who may reach which MCP server and tool, deny by default (LiteLLM's MCP permission management,
 * docs.litellm.ai/docs/mcp_control): the master key reaches every server and tool; a virtual key reaches a
 * server when its `object_permission.mcp_servers` names it or the server is declared `allow_all_keys: true`,
 * and `object_permission.mcp_tool_permissions: {<server>: [tools]}` narrows a server to those tools.
 */
import type { AuthContext, ObjectPermission } from "../auth/types.js";
import type { McpServerConfig } from "../config/mcp-servers.js";

/** The key's MCP grants (none for a key without `object_permission`). */
function grants(auth: AuthContext): ObjectPermission {
  return auth.kind === "virtual" ? (auth.objectPermission ?? {}) : {};
}

/** Whether `auth` may reach `server` at all. */
export function mayReachServer(auth: AuthContext, server: McpServerConfig): boolean {
  if (auth.kind === "master" || server.allowAllKeys) return true;
  return grants(auth).mcp_servers?.includes(server.name) === true;
}

/** Whether `auth` may list and call `tool` (the upstream's own name) of `server`. */
export function mayUseTool(auth: AuthContext, server: McpServerConfig, tool: string): boolean {
  if (!mayReachServer(auth, server)) return false;
  const narrowed = grants(auth).mcp_tool_permissions?.[server.name];
  return narrowed === undefined || narrowed.includes(tool);
}
