import { Badge, Box, Button, Card, Group, Stack, Table, Text } from "@mantine/core";
import type { ReactNode } from "react";
import type { ConsoleKey, OwnedKey } from "../api";
import { BlockButton } from "../components/BlockButton";
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
  /** Blocks (`true`) or unblocks (`false`) an active key; without it no Block/Unblock button. */
  onBlock?: (key: ConsoleKey, blocked: boolean) => Promise<void>;
  /** Shows each key's owner (the operator's Keys view: keys are {@link OwnedKey}s). */
  withOwner?: boolean;
}

/** The key's team in the console's words: "team <alias>" (else its id), or null for a key of no team. */
function teamLabel(k: ConsoleKey): string | null {
  if (k.team_id == null) return null;
  return `team ${(k as Partial<OwnedKey>).team_alias ?? k.team_id}`;
}

/**
 * Who a key belongs to, in the console's words: "Chat (service key)", the user's e-mail (with its team, if
 * any: "dev@example.com · team Search"), the team of a team's key ("team Search"), or "no user".
 */
export function ownerLabel(k: ConsoleKey): string {
  const owned = k as Partial<OwnedKey>;
  const team = teamLabel(k);
  if (owned.service === true) return "Chat (service key)";
  if (owned.user_id == null) return team ?? "no user";
  const user = owned.user_email ?? owned.user_id;
  return team === null ? user : `${user} · ${team}`;
}

/**
 * Keys with Name, (Owner,) Usage, Limits, Last used, Created, Expires, ("Blocked",) (Block/Unblock,) Edit and
 * Revoke: a table on wide screens, cards on phones.
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
  onBlock,
}: { k: ConsoleKey } & Pick<KeyListProps, "onRevoke" | "onEdit" | "onBlock">) {
  const label = `${k.key_alias ?? ""} (${k.key_name})`;
  const blocked = k.blocked === true;
  return k.status === "active" ? (
    <Group gap="xs" wrap={onBlock === undefined ? "nowrap" : "wrap"} justify="flex-end">
      {blocked && (
        <Badge color="red" variant="light" data-testid="key-blocked">
          Blocked
        </Badge>
      )}
      {onBlock !== undefined && (
        <BlockButton label={label} blocked={blocked} onBlock={(to) => onBlock(k, to)} />
      )}
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

function KeyCards({ keys, onRevoke, onEdit, onBlock, withOwner }: KeyListProps) {
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
          <Group justify="space-between" wrap={onBlock === undefined ? "nowrap" : "wrap"} align="flex-start">
            <KeyName k={k} />
            <RevokeOrStatus k={k} onRevoke={onRevoke} onEdit={onEdit} onBlock={onBlock} />
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

function WideKeyTable({ keys, onRevoke, onEdit, onBlock, withOwner }: KeyListProps) {
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
                <RevokeOrStatus k={k} onRevoke={onRevoke} onEdit={onEdit} onBlock={onBlock} />
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
        {k.team_id == null ? "account limits" : `limits of ${teamLabel(k)}`}
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
