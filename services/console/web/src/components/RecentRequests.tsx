import { Box, Card, Group, Pagination, Table, Text } from "@mantine/core";
import { useState } from "react";
import type { SpendLogRow } from "../api";
import { callOutcome, count, time, usd } from "../format";

type Row = SpendLogRow;

/** A call's status and, when it failed, why (`reason`), as text, marked for the eye when it did not succeed. */
function Status({ status, reason }: { status: number; reason: string | null | undefined }) {
  const ok = status >= 200 && status < 300;
  return (
    <Text span size="sm" fw={ok ? 400 : 700} c={ok ? undefined : "var(--mantine-color-error)"}>
      {callOutcome(status, reason)}
    </Text>
  );
}

/** Requests a page shows. */
export const PAGE_SIZE = 50;

/**
 * The period's requests, newest first, {@link PAGE_SIZE} a page: time in the browser's zone (named), model,
 * key, status with the reason of a refused or failed call (budget, rate limit, guardrail, provider error), tokens
 * and cost; a list on phones, a table from the `sm` breakpoint. `truncated`: the period
 * had more than the rows given (the newest 1000).
 */
export function RecentRequests({ requests, truncated }: { requests: Row[]; truncated: boolean }) {
  const [page, setPage] = useState(1);
  const pages = Math.max(1, Math.ceil(requests.length / PAGE_SIZE));
  const current = Math.min(page, pages);
  const rows = requests.slice((current - 1) * PAGE_SIZE, current * PAGE_SIZE);
  return (
    <Card withBorder radius="md">
      <Text size="sm" c="dimmed" mb="xs" data-testid="requests-caption">
        {requests.length === 0
          ? "Requests"
          : `Requests, newest first: ${count((current - 1) * PAGE_SIZE + 1)}–${count((current - 1) * PAGE_SIZE + rows.length)} of ${count(requests.length)}${truncated ? " (the newest 1,000; the CSV has the same)" : ""}`}
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
            <Status status={r.status} reason={r.reason} />
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
                  <Status status={r.status} reason={r.reason} />
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
      {pages > 1 && (
        <Pagination
          total={pages}
          value={current}
          onChange={setPage}
          mt="sm"
          size="sm"
          getControlProps={(control) => ({
            "aria-label": control === "previous" ? "Previous page" : "Next page",
          })}
          getItemProps={(n) => ({ "aria-label": `Page ${n}` })}
        />
      )}
    </Card>
  );
}
