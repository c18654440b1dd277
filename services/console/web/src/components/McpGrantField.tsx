import { MultiSelect, Stack, Text } from "@mantine/core";
import { ownToolName } from "@platform/admin-api";
import type { McpServer, ObjectPermission } from "../api";

/** The MCP servers a grant names, and per server the tools it narrows to (none listed: every tool). */
export interface McpGrant {
  servers: string[];
  tools: Record<string, string[]>;
}

/** A key's or team's `object_permission` as the field edits it. */
export function grantOf(permission: ObjectPermission | null): McpGrant {
  return {
    servers: permission?.mcp_servers ?? [],
    tools: permission?.mcp_tool_permissions ?? {},
  };
}

/**
 * The `object_permission` `/key/update` (or `/team/update`) gets for `grant`: null when no server is chosen (a key
 * then reaches only servers open to all keys, or its team's); the tool lists of chosen servers only, an empty one
 * left out.
 */
export function permissionOf(grant: McpGrant): ObjectPermission | null {
  if (grant.servers.length === 0) return null;
  const tools = Object.fromEntries(
    grant.servers.flatMap((s) => ((grant.tools[s]?.length ?? 0) > 0 ? [[s, grant.tools[s] ?? []]] : [])),
  );
  return {
    mcp_servers: grant.servers,
    ...(Object.keys(tools).length > 0 ? { mcp_tool_permissions: tools } : {}),
  };
}

/** What the servers field means, by who holds the grant. */
const HOLDER_DESCRIPTIONS = {
  key: "Tool servers this key may call through the gateway's /mcp. None: only servers open to all keys, or its team's.",
  team: "Tool servers the team's keys may call through the gateway's /mcp (a key with its own grant: only those both name). None: only servers open to all keys.",
};

/**
 * The operator's choice of the MCP servers of a key or, with `holder` "team", of a team's keys (LiteLLM's
 * `object_permission.mcp_servers`) and, for each chosen server, its tools (`mcp_tool_permissions`; none chosen
 * = every tool of the server). Deny by default: no server chosen, a key reaches only servers open to all keys
 * (or its team's). A server or tool the grant names that the gateway no longer declares stays listed, so
 * saving does not drop it silently.
 */
export function McpGrantField({
  servers,
  grant,
  onGrant,
  holder = "key",
}: {
  servers: McpServer[];
  grant: McpGrant;
  onGrant: (grant: McpGrant) => void;
  holder?: "key" | "team";
}) {
  const names = [...new Set([...servers.map((s) => s.server_name), ...grant.servers])];
  const serverOption = (name: string) => {
    const server = servers.find((s) => s.server_name === name);
    const note =
      server === undefined ? " (not declared)" : server.allow_all_keys ? " (open to all keys)" : "";
    return { value: name, label: `${name}${note}` };
  };
  const toolsOf = (name: string) => {
    const listed =
      servers.find((s) => s.server_name === name)?.tools.map((t) => ownToolName(name, t.name)) ?? [];
    return [...new Set([...listed, ...(grant.tools[name] ?? [])])];
  };
  return (
    <Stack gap="xs" data-testid="mcp-grant">
      <MultiSelect
        label="MCP servers"
        description={HOLDER_DESCRIPTIONS[holder]}
        placeholder={grant.servers.length === 0 ? "none" : undefined}
        data={names.map(serverOption)}
        value={grant.servers}
        onChange={(chosen) => onGrant({ ...grant, servers: chosen })}
        clearable
        searchable
      />
      {grant.servers.map((name) => (
        <MultiSelect
          key={name}
          label={`Tools of ${name}`}
          placeholder={(grant.tools[name]?.length ?? 0) === 0 ? "every tool" : undefined}
          data={toolsOf(name)}
          value={grant.tools[name] ?? []}
          onChange={(chosen) => onGrant({ ...grant, tools: { ...grant.tools, [name]: chosen } })}
          clearable
          searchable
        />
      ))}
      {servers.length === 0 && (
        <Text size="xs" c="dimmed">
          The gateway declares no MCP server (mcp_servers in its config).
        </Text>
      )}
    </Stack>
  );
}
