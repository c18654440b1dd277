import { Box, Card, Group, Table, Text } from "@mantine/core";
import type { ConsoleUsage } from "../api";
import { callStatus, count, time, usd } from "../format";

type Row = ConsoleUsage["recent"][number];

/** A call's status as text, marked for the eye when it did not succeed. */
function Status({ status }: { status: number }) {
  const ok = status >= 200 && status < 300;
  return (
    <Text span size="sm" fw={ok ? 400 : 700} c={ok ? undefined : "var(--mantine-color-error)"}>
      {callStatus(status)}
    </Text>
  );
}

/**
 * The most recent requests (up to 50): time in the browser's zone (named), model, key, status, tokens and
 * cost; a list on phones, a table from the `sm` breakpoint.
 */
export function RecentRequests({ rows }: { rows: Row[] }) {
  return (
    <Card withBorder radius="md">
      <Text size="sm" c="dimmed" mb="xs">
        Most recent requests (up to 50)
      </Text>
      <Box hiddenFrom="sm" data-testid="recent-requests-list">
        {rows.map((r) => (
          <Box
            key={r.request_id}
            py={6}
            style={{ borderBottom: "1px solid var(--mantine-color-default-border)" }}
          >
            <Group justify="space-between" wrap="nowrap">
              <Text size="sm" fw={600}>
                {r.model_group}
              </Text>
              <Text size="sm">{usd(r.spend)}</Text>
            </Group>
            <Text size="xs" c="dimmed">
              {time(r.startTime)} · {r.key_alias ?? "—"} · {count(r.prompt_tokens)} in /{" "}
              {count(r.completion_tokens)} out tokens
            </Text>
            <Status status={r.status} />
          </Box>
        ))}
      </Box>
      <Table.ScrollContainer minWidth={640} visibleFrom="sm">
        <Table striped data-testid="recent-requests">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Time</Table.Th>
              <Table.Th>Model</Table.Th>
              <Table.Th>Key</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th ta="right">Tokens (in / out)</Table.Th>
              <Table.Th ta="right">Cost</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((r) => (
              <Table.Tr key={r.request_id}>
                <Table.Td>{time(r.startTime)}</Table.Td>
                <Table.Td>{r.model_group}</Table.Td>
                <Table.Td>{r.key_alias ?? "—"}</Table.Td>
                <Table.Td>
                  <Status status={r.status} />
                </Table.Td>
                <Table.Td ta="right">
                  {count(r.prompt_tokens)} / {count(r.completion_tokens)}
                </Table.Td>
                <Table.Td ta="right">{usd(r.spend)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {rows.length === 0 && (
        <Text size="sm" c="dimmed" ta="center" py="md">
          No requests in this period.
        </Text>
      )}
    </Card>
  );
}
