import { Badge, Card, Code, Group, Stack, Text, Title } from "@mantine/core";
import type { McpServer } from "../api";
import { Loaded, type LoadResult } from "./Loaded";

/**
 * The gateway's declared MCP servers (its `mcp_servers:` config, `GET /v1/mcp/server`) for the operator: each
 * server's transport, where it runs (URL without query, or a stdio command), whether every key may use it, and
 * its tools under the names callers see (`<server>-<tool>`). A server that could not be listed says why.
 */
export function McpServersCard({ result }: { result: LoadResult<{ servers: McpServer[] }> }) {
  return (
    <Card withBorder radius="md" data-testid="mcp-servers">
      <Stack gap="sm">
        <Title order={2} size="h4">
          MCP servers
        </Title>
        <Text size="sm" c="dimmed">
          Tool servers behind the gateway's /mcp. A key reaches a server open to all keys, or one granted to
          it (Edit) or to its team.
        </Text>
        <Loaded result={result} what="the MCP servers">
          {(data) =>
            data.servers.length === 0 ? (
              <Text c="dimmed">The gateway declares no MCP server (mcp_servers in its config).</Text>
            ) : (
              <Stack gap="md">
                {data.servers.map((s) => (
                  <Stack key={s.server_name} gap={4} data-testid="mcp-server">
                    <Group gap="xs" wrap="wrap">
                      <Text fw={600}>{s.server_name}</Text>
                      <Badge variant="light">{s.transport}</Badge>
                      <Badge variant="light" color={s.allow_all_keys ? "orange" : "gray"}>
                        {s.allow_all_keys ? "all keys" : "granted keys"}
                      </Badge>
                    </Group>
                    <Text size="xs" c="dimmed" style={{ overflowWrap: "anywhere" }}>
                      {[s.description, s.url ?? s.command].filter(Boolean).join(" · ")}
                    </Text>
                    {s.status === "unhealthy" ? (
                      <Text size="sm" c="red">
                        {s.health_check_error ?? "Could not be listed."}
                      </Text>
                    ) : (
                      <Group gap={4} wrap="wrap">
                        {s.tools.map((t) => (
                          <Code key={t.name} title={t.description}>
                            {t.name}
                          </Code>
                        ))}
                      </Group>
                    )}
                  </Stack>
                ))}
              </Stack>
            )
          }
        </Loaded>
      </Stack>
    </Card>
  );
}
