import { Box, Card, Group, SimpleGrid, Stack, Table, Text } from "@mantine/core";
import { useState } from "react";
import type { UsageResponse } from "../api";
import { DownloadCsv } from "../components/DownloadCsv";
import { Loaded } from "../components/Loaded";
import { PeriodPicker } from "../components/PeriodPicker";
import { SpendBars } from "../components/SpendBars";
import { UsageChart } from "../components/UsageChart";
import { count, time, usd } from "../format";
import { useFetch } from "../useFetch";
import { UsageStats } from "./ProfileTab";

/** Usage: 7/30/90-day chart, spend by model, keys compared, the 50 most recent requests. */
export function UsageTab() {
  const [days, setDays] = useState("30");
  const usage = useFetch<UsageResponse>(`/api/usage?days=${days}`);
  return (
    <Stack>
      <Group justify="space-between">
        <PeriodPicker value={days} onChange={setDays} />
        <DownloadCsv href={`/api/usage/export.csv?days=${days}`} />
      </Group>
      <Loaded result={usage} what="your usage">
        {(data) => (
          <>
            <UsageStats totals={data.totals} />
            <UsageChart daily={data.daily} height={260} />
            <SimpleGrid cols={{ base: 1, md: 2 }}>
              <SpendBars title="Spend by model" rows={data.by_model.map((m) => ({ ...m, label: m.model }))} />
              <SpendBars
                title="Keys compared (spend)"
                rows={data.by_key.map((k) => ({ ...k, label: k.key_alias ?? k.key_name ?? "master key" }))}
              />
            </SimpleGrid>
            <Card withBorder radius="md">
              <Text size="sm" c="dimmed" mb="xs">
                Most recent requests (up to 50)
              </Text>
              <Box hiddenFrom="sm" data-testid="recent-requests-list">
                {data.recent.map((r) => (
                  <Box
                    key={r.request_id}
                    py={6}
                    style={{ borderBottom: "1px solid var(--mantine-color-gray-3)" }}
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
                  </Box>
                ))}
              </Box>
              <Table.ScrollContainer minWidth={560} visibleFrom="sm">
                <Table striped data-testid="recent-requests">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>Time</Table.Th>
                      <Table.Th>Model</Table.Th>
                      <Table.Th>Key</Table.Th>
                      <Table.Th ta="right">Tokens (in / out)</Table.Th>
                      <Table.Th ta="right">Cost</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {data.recent.map((r) => (
                      <Table.Tr key={r.request_id}>
                        <Table.Td>{time(r.startTime)}</Table.Td>
                        <Table.Td>{r.model_group}</Table.Td>
                        <Table.Td>{r.key_alias ?? "—"}</Table.Td>
                        <Table.Td ta="right">
                          {count(r.prompt_tokens)} / {count(r.completion_tokens)}
                        </Table.Td>
                        <Table.Td ta="right">{usd(r.spend)}</Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </Table.ScrollContainer>
              {data.recent.length === 0 && (
                <Text size="sm" c="dimmed" ta="center" py="md">
                  No requests in this period.
                </Text>
              )}
            </Card>
          </>
        )}
      </Loaded>
    </Stack>
  );
}
