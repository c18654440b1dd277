import { Alert, Badge, Card, SimpleGrid, Stack, Table, Text, Title } from "@mantine/core";
import type { Me, UsageResponse } from "../api";
import { BudgetBar } from "../components/BudgetBar";
import { Loaded } from "../components/Loaded";
import { SpendBars } from "../components/SpendBars";
import { UsageChart } from "../components/UsageChart";
import { RefusedCalls, UsageStats } from "../components/UsageStats";
import { budget, count, day, perMinute, roleLabel, usd } from "../format";
import { useFetch } from "../useFetch";

/**
 * Profile: email, role, available budget, 7-day figures with the refused calls counted by reason, chart, spend
 * breakdown, per-minute limits, most-used keys.
 */
export function ProfileTab({ me }: { me: Me }) {
  const usage = useFetch<UsageResponse>(me.kind === "chat" ? "/api/usage?days=7" : null);
  const account = me.account;
  return (
    <Stack>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <Card withBorder radius="md">
          <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
            Account
          </Text>
          <Text fw={600} mt={4} style={{ wordBreak: "break-all" }}>
            {me.email ?? "Operator (master key)"}
          </Text>
          <Badge mt="xs" variant="light" tt="none" color={me.is_admin ? "grape" : "blue"}>
            {roleLabel(me.is_admin)}
          </Badge>
        </Card>
        <Card withBorder radius="md">
          <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
            Available budget
          </Text>
          {account === null ? (
            <Text mt={4}>—</Text>
          ) : account.max_budget === null ? (
            <Text fw={600} mt={4} data-testid="available-budget">
              Unlimited usage
            </Text>
          ) : (
            <>
              <Text fw={600} mt={4} data-testid="available-budget">
                {usd(Math.max(0, account.max_budget - account.spend))} of{" "}
                {budget(account.max_budget, account.budget_duration)}
              </Text>
              <BudgetBar spend={account.spend} maxBudget={account.max_budget} testId="budget-state" />
              {account.budget_reset_at !== null && (
                <Text size="xs" c="dimmed" mt={4}>
                  Resets {day(account.budget_reset_at)}
                </Text>
              )}
            </>
          )}
        </Card>
        <Card withBorder radius="md">
          <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
            Per-minute limits
          </Text>
          <Text mt={4}>{perMinute(account?.rpm_limit ?? null, "requests")}</Text>
          <Text>{perMinute(account?.tpm_limit ?? null, "tokens")}</Text>
        </Card>
      </SimpleGrid>
      {me.kind === "operator" && (
        <Alert color="blue">Signed in with the master key: use the Admin tab to manage users and keys.</Alert>
      )}
      {me.kind === "chat" && (
        <Loaded result={usage} what="your usage">
          {(data) => (
            <>
              <Title order={2} size="h4">
                Last 7 days
              </Title>
              <UsageStats totals={data.totals} />
              <RefusedCalls totals={data.totals} byReason={data.by_reason} period="in these 7 days" />
              <UsageChart daily={data.daily} />
              <SimpleGrid cols={{ base: 1, md: 2 }}>
                <SpendBars
                  title="Spend by model"
                  rows={data.by_model.map((m) => ({ ...m, label: m.model }))}
                />
                <Card withBorder radius="md">
                  <Text size="sm" c="dimmed" mb="xs">
                    Most-used keys
                  </Text>
                  <Table>
                    <Table.Thead>
                      <Table.Tr>
                        <Table.Th>Key</Table.Th>
                        <Table.Th ta="right">Requests</Table.Th>
                        <Table.Th ta="right">Spend</Table.Th>
                      </Table.Tr>
                    </Table.Thead>
                    <Table.Tbody>
                      {data.by_key.slice(0, 5).map((k) => (
                        <Table.Tr key={k.api_key ?? "none"}>
                          <Table.Td>
                            <Text size="sm">{k.key_alias ?? "—"}</Text>
                            <Text size="xs" c="dimmed" ff="monospace">
                              {k.key_name ?? ""}
                            </Text>
                          </Table.Td>
                          <Table.Td ta="right">{count(k.requests)}</Table.Td>
                          <Table.Td ta="right">{usd(k.spend)}</Table.Td>
                        </Table.Tr>
                      ))}
                    </Table.Tbody>
                  </Table>
                  {data.by_key.length === 0 && (
                    <Text size="sm" c="dimmed" ta="center" py="md">
                      No key used in the last 7 days.
                    </Text>
                  )}
                </Card>
              </SimpleGrid>
            </>
          )}
        </Loaded>
      )}
    </Stack>
  );
}
