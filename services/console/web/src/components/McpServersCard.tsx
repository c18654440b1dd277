import { Badge, Card, Code, Group, Stack, Table, Text, Title } from "@mantine/core";
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
        <Title order={3} size="h4">
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
              <Table.ScrollContainer minWidth={720}>
                <Table verticalSpacing="xs">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>Server</Table.Th>
                      <Table.Th>Transport</Table.Th>
                      <Table.Th>Keys</Table.Th>
                      <Table.Th>Tools</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {data.servers.map((s) => (
                      <Table.Tr key={s.server_name}>
                        <Table.Td>
                          <Text fw={600}>{s.server_name}</Text>
                          <Text size="xs" c="dimmed">
                            {s.url ?? s.command}
                          </Text>
                        </Table.Td>
                        <Table.Td>{s.transport}</Table.Td>
                        <Table.Td>{s.allow_all_keys ? "all keys" : "granted keys"}</Table.Td>
                        <Table.Td>
                          {s.status === "unhealthy" ? (
                            <Badge color="red" variant="light">
                              {s.health_check_error ?? "unreachable"}
                            </Badge>
                          ) : (
                            <Group gap={4}>
                              {s.tools.map((t) => (
                                <Code key={t.name} title={t.description}>
                                  {t.name}
                                </Code>
                              ))}
                            </Group>
                          )}
                        </Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </Table.ScrollContainer>
            )
          }
        </Loaded>
      </Stack>
    </Card>
  );
}
