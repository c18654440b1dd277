import {
  Alert,
  Box,
  Button,
  Card,
  Group,
  Modal,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
} from "@mantine/core";
import { useMemo, useState } from "react";
import { api, type ConsoleKey, type McpServer, type Me, type PlatformSpend, type UserRecord } from "../api";
import { ColumnHeads } from "../components/ColumnHeads";
import { DownloadCsv } from "../components/DownloadCsv";
import { EditLimitsModal } from "../components/EditLimitsModal";
import { GenerateKeyModal } from "../components/GenerateKeyModal";
import { Loaded } from "../components/Loaded";
import { PeriodRange } from "../components/PeriodRange";
import { PickOne } from "../components/PickOne";
import { ResponseCacheStats } from "../components/ResponseCacheStats";
import { SpendBars } from "../components/SpendBars";
import { UsageChart } from "../components/UsageChart";
import { CallsByReason, Stat, UsageStats } from "../components/UsageStats";
import { budget, count, gatewayRoleLabel, perMinute, usd } from "../format";
import { useFetch } from "../useFetch";
import { KeyTable } from "./KeyTable";

/**
 * Admin: platform spend per day and model (requests answered, refused and failed; the refused and failed ones by
 * reason; answers from the response cache and what they saved), every user with spend and budget, edit limits, a user's keys,
 * generate a key for a user or of no user (the operator's own).
 */
export function AdminTab({ me }: { me: Me }) {
  const [period, setPeriod] = useState("days=30");
  const spend = useFetch<PlatformSpend>(`/api/admin/spend?${period}`);
  const users = useFetch<{ users: UserRecord[] }>("/api/admin/users");
  const [editing, setEditing] = useState<UserRecord | null>(null);
  const [viewing, setViewing] = useState<UserRecord | null>(null);
  // The owner of the key being generated: a user id, null for none; undefined while the dialog is closed.
  const [keyFor, setKeyFor] = useState<string | null | undefined>(undefined);
  // The MCP servers a new key may be granted, read when the generate dialog opens.
  const mcp = useFetch<{ servers: McpServer[] }>(keyFor === undefined ? null : "/api/admin/mcp-servers");
  const [saved, setSaved] = useState<string | null>(null);
  const [search, setSearch] = useState("");
  const [sort, setSort] = useState<string | null>("spend");
  // Under the user's name on phones (wrapping), in their own column on wider screens.
  const actions = (u: UserRecord, phone: boolean) => (
    <UserActions
      phone={phone}
      onLimits={() => setEditing(u)}
      onKeys={() => setViewing(u)}
      onNewKey={() => setKeyFor(u.user_id)}
    />
  );
  const shown = useMemo(() => sortUsers(users.data?.users ?? [], search, sort), [users.data, search, sort]);
  return (
    <Stack>
      <Group justify="space-between">
        <Text fw={600}>Platform spend</Text>
        <Group gap="sm">
          <PeriodRange onChange={setPeriod} />
          <DownloadCsv href={`/api/admin/spend/export.csv?${period}`} />
        </Group>
      </Group>
      <Loaded result={spend} what="the platform's spend">
        {(data) => (
          <>
            <UsageStats totals={data.totals} extra={<Stat label="Users" value={count(data.users)} />} />
            <CallsByReason totals={data.totals} byReason={data.by_reason} />
            <ResponseCacheStats totals={data.totals} />
            <SimpleGrid cols={{ base: 1, md: 2 }}>
              <UsageChart daily={data.daily} />
              <SpendBars title="Spend by model" rows={data.by_model.map((m) => ({ ...m, label: m.model }))} />
            </SimpleGrid>
          </>
        )}
      </Loaded>
      {saved !== null && (
        <Alert
          color="teal"
          title="Saved"
          withCloseButton
          closeButtonLabel="Dismiss"
          onClose={() => setSaved(null)}
        >
          The limits of {saved} are saved; they apply to the next call.
        </Alert>
      )}
      <Group justify="space-between" mt="sm">
        <Text fw={600}>Users and keys</Text>
        <Button onClick={() => setKeyFor(null)}>Generate key</Button>
      </Group>
      <Group justify="space-between" align="flex-end">
        <TextInput
          label="Find a user"
          placeholder="email or id"
          value={search}
          onChange={(e) => setSearch(e.currentTarget.value)}
          w={{ base: "100%", xs: 260 }}
        />
        <PickOne
          label="Sort by"
          data={[
            { value: "spend", label: "Spend (highest first)" },
            { value: "budget", label: "Budget used (highest first)" },
            { value: "email", label: "Email (A–Z)" },
          ]}
          value={sort}
          onChange={setSort}
          w={{ base: "100%", xs: 240 }}
        />
      </Group>
      <Card withBorder radius="md" p={0}>
        <Loaded result={users} what="the users">
          {() => (
            <Table.ScrollContainer minWidth={340}>
              <Table verticalSpacing="sm" data-testid="user-table">
                <ColumnHeads
                  columns={["User", "Spend", "Budget", { label: "Limits", visibleFrom: "sm" }]}
                  actions="sm"
                />
                <Table.Tbody>
                  {shown.map((u) => (
                    <Table.Tr key={u.user_id}>
                      <Table.Td>
                        <Text size="sm" fw={600}>
                          {u.user_email ?? u.user_id}
                        </Text>
                        <Text size="xs" c="dimmed">
                          {gatewayRoleLabel(u.user_role)}
                        </Text>
                        <Box hiddenFrom="sm" mt={6}>
                          {actions(u, true)}
                        </Box>
                      </Table.Td>
                      <Table.Td>{usd(u.spend)}</Table.Td>
                      <Table.Td>{budget(u.max_budget, u.budget_duration)}</Table.Td>
                      <Table.Td visibleFrom="sm">
                        <Text size="xs">{perMinute(u.rpm_limit, "req")}</Text>
                        <Text size="xs">{perMinute(u.tpm_limit, "tok")}</Text>
                      </Table.Td>
                      <Table.Td visibleFrom="sm">{actions(u, false)}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )}
        </Loaded>
        {users.data !== null && shown.length === 0 && (
          <Text size="sm" c="dimmed" ta="center" py="md">
            No user matches "{search}".
          </Text>
        )}
      </Card>
      {editing !== null && (
        <EditLimitsModal
          user={editing}
          onClose={(who) => {
            setEditing(null);
            setSaved(who);
            if (who !== null) users.reload();
          }}
        />
      )}
      {viewing !== null && <UserKeys user={viewing} onClose={() => setViewing(null)} />}
      <GenerateKeyModal
        me={me}
        opened={keyFor !== undefined}
        owners={{
          users: users.data?.users ?? [],
          userId: keyFor ?? null,
          mcpServers: mcp.data?.servers ?? [],
        }}
        onClose={() => setKeyFor(undefined)}
      />
    </Stack>
  );
}

/** A user's keys, any of which an administrator may revoke. */
function UserKeys({ user, onClose }: { user: UserRecord; onClose: () => void }) {
  const keys = useFetch<{ keys: ConsoleKey[] }>(`/api/admin/users/${encodeURIComponent(user.user_id)}/keys`);
  return (
    <Modal
      opened
      onClose={onClose}
      title={`Keys of ${user.user_email ?? user.user_id}`}
      // Wide enough for the key table (820 px) with its Revoke column.
      size={1000}
      centered
    >
      <Loaded result={keys} what="the keys">
        {(data) =>
          data.keys.length === 0 ? (
            <Text c="dimmed">No keys.</Text>
          ) : (
            <KeyTable
              keys={data.keys}
              onRevoke={async (k) => {
                await api("DELETE", `/api/admin/keys/${k.token}`);
                keys.reload();
              }}
            />
          )
        }
      </Loaded>
    </Modal>
  );
}

/** The per-user buttons: edit limits, list keys, generate a key. */
function UserActions({
  phone,
  onLimits,
  onKeys,
  onNewKey,
}: {
  phone: boolean;
  onLimits: () => void;
  onKeys: () => void;
  onNewKey: () => void;
}) {
  return (
    <Group gap="xs" justify={phone ? "flex-start" : "flex-end"} wrap={phone ? "wrap" : "nowrap"}>
      <Button size="xs" variant="light" onClick={onLimits}>
        Limits
      </Button>
      <Button size="xs" variant="default" onClick={onKeys}>
        Keys
      </Button>
      <Button size="xs" variant="default" onClick={onNewKey}>
        New key
      </Button>
    </Group>
  );
}

/** Users whose email or id contains `search` (any case), sorted by spend, share of budget used, or email. */
export function sortUsers(users: UserRecord[], search: string, sort: string | null): UserRecord[] {
  const needle = search.trim().toLowerCase();
  const name = (u: UserRecord) => (u.user_email ?? u.user_id).toLowerCase();
  const used = (u: UserRecord) =>
    u.max_budget === null ? -1 : u.max_budget === 0 ? Infinity : u.spend / u.max_budget;
  const found = users.filter(
    (u) => needle === "" || name(u).includes(needle) || u.user_id.toLowerCase().includes(needle),
  );
  const by: Record<string, (a: UserRecord, b: UserRecord) => number> = {
    spend: (a, b) => b.spend - a.spend,
    budget: (a, b) => used(b) - used(a),
    email: (a, b) => name(a).localeCompare(name(b)),
  };
  return [...found].sort(by[sort ?? "spend"] ?? by.spend);
}
