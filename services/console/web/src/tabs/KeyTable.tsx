import { Badge, Box, Card, Group, Stack, Table, Text } from "@mantine/core";
import type { ConsoleKey } from "../api";
import { RevokeButton } from "../components/RevokeButton";
import { BUDGET_WARNING_SHARE, budget, budgetShare, day, perMinute, time, usd } from "../format";

const lastUsed = (k: ConsoleKey) => (k.last_used_at == null ? "never" : time(k.last_used_at));

interface KeyListProps {
  keys: ConsoleKey[];
  onRevoke: (key: ConsoleKey) => Promise<void>;
}

/** Keys with Name, Usage, Limits, Last used, Created, Expires and Revoke: a table on wide screens, cards on phones. */
export function KeyTable(props: KeyListProps) {
  return (
    <>
      <Box visibleFrom="sm">
        <WideKeyTable {...props} />
      </Box>
      <Box hiddenFrom="sm">
        <KeyCards {...props} />
      </Box>
    </>
  );
}

function RevokeOrStatus({ k, onRevoke }: { k: ConsoleKey; onRevoke: KeyListProps["onRevoke"] }) {
  return k.status === "active" ? (
    <RevokeButton label={`${k.key_alias ?? ""} (${k.key_name})`} onRevoke={() => onRevoke(k)} />
  ) : (
    <Badge color="gray" variant="light">
      {k.status}
    </Badge>
  );
}

function KeyCards({ keys, onRevoke }: KeyListProps) {
  return (
    <Stack gap={0}>
      {keys.map((k) => (
        <Card
          key={k.token}
          radius={0}
          p="sm"
          style={{ borderBottom: "1px solid var(--mantine-color-gray-3)" }}
        >
          <Group justify="space-between" wrap="nowrap" align="flex-start">
            <div>
              <Text fw={600} size="sm">
                {k.key_alias ?? "—"}
              </Text>
              <Text size="xs" c="dimmed" ff="monospace">
                {k.key_name}
              </Text>
            </div>
            <RevokeOrStatus k={k} onRevoke={onRevoke} />
          </Group>
          <Group gap="lg" mt="xs" align="flex-start">
            <div>
              <Text size="xs" c="dimmed">
                Usage
              </Text>
              <Text size="sm">{usd(k.spend)}</Text>
            </div>
            <div>
              <Text size="xs" c="dimmed">
                Limits
              </Text>
              <KeyLimits k={k} />
            </div>
            <div>
              <Text size="xs" c="dimmed">
                Last used
              </Text>
              <Text size="sm">{lastUsed(k)}</Text>
            </div>
            <div>
              <Text size="xs" c="dimmed">
                Created · Expires
              </Text>
              <Text size="sm">
                {day(k.created_at)} · {day(k.expires)}
              </Text>
            </div>
          </Group>
        </Card>
      ))}
    </Stack>
  );
}

function WideKeyTable({ keys, onRevoke }: KeyListProps) {
  return (
    <Table.ScrollContainer minWidth={820}>
      <Table verticalSpacing="sm" data-testid="key-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Usage</Table.Th>
            <Table.Th>Limits</Table.Th>
            <Table.Th>Last used</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th>Expires</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {keys.map((k) => (
            <Table.Tr key={k.token} data-testid="key-row">
              <Table.Td>
                <Text fw={600} size="sm">
                  {k.key_alias ?? "—"}
                </Text>
                <Text size="xs" c="dimmed" ff="monospace" data-testid="masked-key">
                  {k.key_name}
                </Text>
              </Table.Td>
              <Table.Td>{usd(k.spend)}</Table.Td>
              <Table.Td>
                <KeyLimits k={k} />
              </Table.Td>
              <Table.Td data-testid="last-used">{lastUsed(k)}</Table.Td>
              <Table.Td>{day(k.created_at)}</Table.Td>
              <Table.Td>{day(k.expires)}</Table.Td>
              <Table.Td ta="right">
                <RevokeOrStatus k={k} onRevoke={onRevoke} />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

/** A warning badge once the key has used more than 80 % of its own budget (as the gateway's budget alerts). */
function KeyBudgetWarning({ k }: { k: ConsoleKey }) {
  const share = budgetShare(k.spend, k.max_budget);
  if (share === null || share <= BUDGET_WARNING_SHARE || k.status !== "active") return null;
  return (
    <Badge
      color={share >= 1 ? "red" : "orange"}
      variant="light"
      c="dark.8"
      tt="none"
      data-testid="key-budget-warning"
    >
      {share >= 1 ? "budget used up" : `${Math.round(share * 100)} % of budget used`}
    </Badge>
  );
}

/** A key's own limits; without any, the account's apply. */
function KeyLimits({ k }: { k: ConsoleKey }) {
  const own = [
    k.max_budget === null ? null : `budget ${budget(k.max_budget, k.budget_duration)}`,
    k.rpm_limit === null ? null : perMinute(k.rpm_limit, "req"),
    k.tpm_limit === null ? null : perMinute(k.tpm_limit, "tok"),
    k.models.length === 0 ? null : `models: ${k.models.join(", ")}`,
  ].filter((line) => line !== null);
  if (own.length === 0) {
    return (
      <Text size="xs" c="dimmed">
        account limits
      </Text>
    );
  }
  return (
    <>
      {own.map((line) => (
        <Text size="xs" key={line}>
          {line}
        </Text>
      ))}
      <KeyBudgetWarning k={k} />
    </>
  );
}
