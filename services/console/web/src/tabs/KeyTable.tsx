import { Badge, Box, Button, Card, Group, Stack, Table, Text } from "@mantine/core";
import type { ReactNode } from "react";
import type { ConsoleKey, OwnedKey } from "../api";
import { BudgetBar } from "../components/BudgetBar";
import { ColumnHeads } from "../components/ColumnHeads";
import { RevokeButton } from "../components/RevokeButton";
import { budget, day, perMinute, time, usd } from "../format";

const lastUsed = (k: ConsoleKey) => (k.last_used_at == null ? "never" : time(k.last_used_at));

interface KeyListProps {
  keys: ConsoleKey[];
  onRevoke: (key: ConsoleKey) => Promise<void>;
  /** Opens the edit dialog of an active key; without it no Edit button. */
  onEdit?: (key: ConsoleKey) => void;
  /** Shows each key's owner (the operator's Keys view: keys are {@link OwnedKey}s). */
  withOwner?: boolean;
}

/** Who a key belongs to, in the console's words: the user's e-mail, "Chat (service key)" or "no user". */
export function ownerLabel(k: ConsoleKey): string {
  const owned = k as Partial<OwnedKey>;
  if (owned.service === true) return "Chat (service key)";
  if (owned.user_id == null) return "no user";
  return owned.user_email ?? owned.user_id;
}

/**
 * Keys with Name, (Owner,) Usage, Limits, Last used, Created, Expires, Edit and Revoke: a table on wide screens,
 * cards on phones.
 */
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

function RevokeOrStatus({
  k,
  onRevoke,
  onEdit,
}: { k: ConsoleKey } & Pick<KeyListProps, "onRevoke" | "onEdit">) {
  const label = `${k.key_alias ?? ""} (${k.key_name})`;
  return k.status === "active" ? (
    <Group gap="xs" wrap="nowrap" justify="flex-end">
      {onEdit !== undefined && (
        <Button size="xs" variant="default" onClick={() => onEdit(k)} aria-label={`Edit ${label}`}>
          Edit
        </Button>
      )}
      <RevokeButton label={label} onRevoke={() => onRevoke(k)} />
    </Group>
  ) : (
    <Badge color="gray" variant="light">
      {k.status}
    </Badge>
  );
}

type Column = { label: string; cell: (k: ConsoleKey) => ReactNode; testId?: string };
const OWNER: Column = { label: "Owner", cell: ownerLabel, testId: "key-owner" };
/** The columns after the name, shared by the table and the cards. */
const COLUMNS: Column[] = [
  { label: "Usage", cell: (k) => usd(k.spend) },
  { label: "Limits", cell: (k) => <KeyLimits k={k} /> },
  { label: "Last used", cell: lastUsed, testId: "last-used" },
  { label: "Created", cell: (k) => day(k.created_at) },
  { label: "Expires", cell: (k) => day(k.expires) },
];

/** The key's alias over its masked form (`sk-…abcd`, with `testId` as its `data-testid`). */
function KeyName({ k, testId }: { k: ConsoleKey; testId?: string }) {
  return (
    <div>
      <Text fw={600} size="sm">
        {k.key_alias ?? "—"}
      </Text>
      <Text size="xs" c="dimmed" ff="monospace" data-testid={testId}>
        {k.key_name}
      </Text>
    </div>
  );
}

function KeyCards({ keys, onRevoke, onEdit, withOwner }: KeyListProps) {
  const columns = withOwner === true ? [OWNER, ...COLUMNS] : COLUMNS;
  return (
    <Stack gap={0}>
      {keys.map((k) => (
        <Card
          key={k.token}
          radius={0}
          p="sm"
          style={{ borderBottom: "1px solid var(--mantine-color-default-border)" }}
        >
          <Group justify="space-between" wrap="nowrap" align="flex-start">
            <KeyName k={k} />
            <RevokeOrStatus k={k} onRevoke={onRevoke} onEdit={onEdit} />
          </Group>
          <Group gap="lg" mt="xs" align="flex-start">
            {columns.map((c) => (
              <div key={c.label}>
                <Text size="xs" c="dimmed">
                  {c.label}
                </Text>
                <Box fz="sm">{c.cell(k)}</Box>
              </div>
            ))}
          </Group>
        </Card>
      ))}
    </Stack>
  );
}

function WideKeyTable({ keys, onRevoke, onEdit, withOwner }: KeyListProps) {
  const columns = withOwner === true ? [OWNER, ...COLUMNS] : COLUMNS;
  return (
    <Table.ScrollContainer minWidth={withOwner === true ? 1000 : 880}>
      <Table verticalSpacing="sm" data-testid="key-table">
        <ColumnHeads columns={["Name", ...columns.map((c) => c.label)]} actions />
        <Table.Tbody>
          {keys.map((k) => (
            <Table.Tr key={k.token} data-testid="key-row">
              <Table.Td>
                <KeyName k={k} testId="masked-key" />
              </Table.Td>
              {columns.map((c) => (
                <Table.Td key={c.label} data-testid={c.testId}>
                  {c.cell(k)}
                </Table.Td>
              ))}
              <Table.Td ta="right">
                <RevokeOrStatus k={k} onRevoke={onRevoke} onEdit={onEdit} />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

/** A key's own limits; without any, its team's (a team key) or its owner's account's apply. */
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
        {k.team_id == null ? "account limits" : "team limits"}
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
      {k.status === "active" && (
        <BudgetBar spend={k.spend} maxBudget={k.max_budget} size="xs" testId="key-budget-warning" />
      )}
    </>
  );
}
