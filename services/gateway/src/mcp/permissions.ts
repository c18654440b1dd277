/**
 * Who may reach which MCP server and tool, deny by default (LiteLLM's MCP permission management,
 * docs.litellm.ai/docs/mcp_control and /docs/proxy/access_management/inheritance). The master key reaches every
 * server and tool. A virtual key reaches a server declared `allow_all_keys: true`, or one its grants name:
 *
 * - servers: the key's `object_permission.mcp_servers` and its team's. A key that names none inherits its team's;
 *   when both name some, the key reaches only those both name (LiteLLM: "the key and team must both allow the
 *   server"); when neither does, none;
 * - tools: `object_permission.mcp_tool_permissions: {<server>: [tools]}` of the key and of its team each narrow
 *   a server to those tools; with both, only the tools in both lists. A server in neither map: all its tools.
 */
import type { AuthContext, ObjectPermission } from "../auth/types.js";
import type { McpServerConfig } from "../config/mcp-servers.js";

/** The key's own grants and its team's (empty for a key or team without `object_permission`). */
function grants(auth: AuthContext): { key: ObjectPermission; team: ObjectPermission } {
  if (auth.kind !== "virtual") return { key: {}, team: {} };
  return { key: auth.objectPermission ?? {}, team: auth.teamObjectPermission ?? {} };
}

/** A non-empty list of servers, or undefined for "names none". */
const named = (list: readonly string[] | undefined) =>
  list !== undefined && list.length > 0 ? list : undefined;

/** Whether `auth` may reach `server` at all. */
export function mayReachServer(auth: AuthContext, server: McpServerConfig): boolean {
  if (auth.kind === "master" || server.allowAllKeys) return true;
  const { key, team } = grants(auth);
  const own = named(key.mcp_servers);
  const teams = named(team.mcp_servers);
  if (own === undefined && teams === undefined) return false;
  return (own?.includes(server.name) ?? true) && (teams?.includes(server.name) ?? true);
}

/** Whether `auth` may list and call `tool` (the upstream's own name) of `server`. */
export function mayUseTool(auth: AuthContext, server: McpServerConfig, tool: string): boolean {
  if (!mayReachServer(auth, server)) return false;
  const { key, team } = grants(auth);
  return [key, team].every((grant) => {
    const narrowed = grant.mcp_tool_permissions?.[server.name];
    return narrowed === undefined || narrowed.includes(tool);
  });
}
