import {
  Alert,
  Box,
  Button,
  Card,
  Group,
  Loader,
  Modal,
  NumberInput,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
} from "@mantine/core";
import { useState } from "react";
import { ApiError, api, type ConsoleKey, type PlatformSpend, type UserRecord } from "../api";
import { PeriodPicker } from "../components/PeriodPicker";
import { SpendBars } from "../components/SpendBars";
import { UsageChart } from "../components/UsageChart";
import { budget, count, perMinute, usd } from "../format";
import { useFetch } from "../useFetch";
import { KeyTable } from "./KeyTable";
import { Stat } from "./ProfileTab";

/** Admin: platform spend per day and model, every user with spend and budget, edit limits, a user's keys. */
export function AdminTab() {
  const [days, setDays] = useState("30");
  const spend = useFetch<PlatformSpend>(`/api/admin/spend?days=${days}`);
  const users = useFetch<{ users: UserRecord[] }>("/api/admin/users");
  const [editing, setEditing] = useState<UserRecord | null>(null);
  const [viewing, setViewing] = useState<UserRecord | null>(null);
  return (
    <Stack>
      <Group justify="space-between">
        <Text fw={600}>Platform spend</Text>
        <PeriodPicker value={days} onChange={setDays} />
      </Group>
      {spend.error !== null && <Alert color="red">{spend.error}</Alert>}
      {spend.data === null ? (
        <Loader size="sm" />
      ) : (
        <>
          <SimpleGrid cols={{ base: 2, sm: 4 }}>
            <Stat label="Spend" value={usd(spend.data.totals.spend)} />
            <Stat label="Requests" value={count(spend.data.totals.requests)} />
            <Stat label="Tokens" value={count(spend.data.totals.total_tokens)} />
            <Stat label="Users" value={count(spend.data.users)} />
          </SimpleGrid>
          <SimpleGrid cols={{ base: 1, md: 2 }}>
            <UsageChart daily={spend.data.daily} />
            <SpendBars
              title="Spend by model"
              rows={spend.data.by_model.map((m) => ({ ...m, label: m.model }))}
            />
          </SimpleGrid>
        </>
      )}
      <Card withBorder radius="md" p={0}>
        {users.error !== null && <Alert color="red">{users.error}</Alert>}
        {users.data === null ? (
          <Loader size="sm" m="md" />
        ) : (
          <Table.ScrollContainer minWidth={340}>
            <Table verticalSpacing="sm" data-testid="user-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>User</Table.Th>
                  <Table.Th>Spend</Table.Th>
                  <Table.Th>Budget</Table.Th>
                  <Table.Th visibleFrom="sm">Limits</Table.Th>
                  <Table.Th visibleFrom="sm" />
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {users.data.users.map((u) => (
                  <Table.Tr key={u.user_id}>
                    <Table.Td>
                      <Text size="sm" fw={600}>
                        {u.user_email ?? u.user_id}
                      </Text>
                      <Text size="xs" c="dimmed">
                        {u.user_role}
                      </Text>
                      <Box hiddenFrom="sm" mt={6}>
                        <UserActions onLimits={() => setEditing(u)} onKeys={() => setViewing(u)} />
                      </Box>
                    </Table.Td>
                    <Table.Td>{usd(u.spend)}</Table.Td>
                    <Table.Td>{budget(u.max_budget, u.budget_duration)}</Table.Td>
                    <Table.Td visibleFrom="sm">
                      <Text size="xs">{perMinute(u.rpm_limit, "req")}</Text>
                      <Text size="xs">{perMinute(u.tpm_limit, "tok")}</Text>
                    </Table.Td>
                    <Table.Td visibleFrom="sm">
                      <UserActions onLimits={() => setEditing(u)} onKeys={() => setViewing(u)} />
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Card>
      {editing !== null && (
        <EditLimits
          user={editing}
          onClose={(changed) => {
            setEditing(null);
            if (changed) users.reload();
          }}
        />
      )}
      {viewing !== null && <UserKeys user={viewing} onClose={() => setViewing(null)} />}
    </Stack>
  );
}

const numberOrNull = (v: string | number) => (v === "" ? null : Number(v));

/** Raise or lower a user's budget and limits (empty = unlimited). */
function EditLimits({ user, onClose }: { user: UserRecord; onClose: (changed: boolean) => void }) {
  const [maxBudget, setMaxBudget] = useState<string | number>(user.max_budget ?? "");
  const [period, setPeriod] = useState(user.budget_duration ?? "");
  const [rpm, setRpm] = useState<string | number>(user.rpm_limit ?? "");
  const [tpm, setTpm] = useState<string | number>(user.tpm_limit ?? "");
  const [error, setError] = useState<string | null>(null);
  const save = async () => {
    try {
      await api("POST", `/api/admin/users/${encodeURIComponent(user.user_id)}`, {
        max_budget: numberOrNull(maxBudget),
        budget_duration: period.trim() === "" ? null : period.trim(),
        rpm_limit: numberOrNull(rpm),
        tpm_limit: numberOrNull(tpm),
      });
      onClose(true);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    }
  };
  return (
    <Modal
      opened
      onClose={() => onClose(false)}
      title={`Limits of ${user.user_email ?? user.user_id}`}
      centered
    >
      <Stack gap="sm">
        <NumberInput
          label="Budget (USD; empty = unlimited)"
          min={0}
          decimalScale={2}
          value={maxBudget}
          onChange={setMaxBudget}
        />
        <TextInput
          label="Budget period (e.g. 30d, 1mo; empty = total)"
          value={period}
          onChange={(e) => setPeriod(e.currentTarget.value)}
        />
        <NumberInput
          label="Requests per minute (empty = unlimited)"
          min={0}
          allowDecimal={false}
          value={rpm}
          onChange={setRpm}
        />
        <NumberInput
          label="Tokens per minute (empty = unlimited)"
          min={0}
          allowDecimal={false}
          value={tpm}
          onChange={setTpm}
        />
        {error !== null && <Alert color="red">{error}</Alert>}
        <Group justify="flex-end">
          <Button variant="default" onClick={() => onClose(false)}>
            Cancel
          </Button>
          <Button onClick={save}>Save</Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** A user's keys, any of which an administrator may revoke. */
function UserKeys({ user, onClose }: { user: UserRecord; onClose: () => void }) {
  const keys = useFetch<{ keys: ConsoleKey[] }>(`/api/admin/users/${encodeURIComponent(user.user_id)}/keys`);
  return (
    <Modal opened onClose={onClose} title={`Keys of ${user.user_email ?? user.user_id}`} size="xl" centered>
      {keys.data === null ? (
        <Loader size="sm" />
      ) : keys.data.keys.length === 0 ? (
        <Text c="dimmed">No keys.</Text>
      ) : (
        <KeyTable
          keys={keys.data.keys}
          onRevoke={async (k) => {
            await api("DELETE", `/api/admin/keys/${k.token}`);
            keys.reload();
          }}
        />
      )}
    </Modal>
  );
}

/** The per-user buttons: edit limits, list keys. */
function UserActions({ onLimits, onKeys }: { onLimits: () => void; onKeys: () => void }) {
  return (
    <Group gap="xs" justify="flex-end" wrap="nowrap">
      <Button size="xs" variant="light" onClick={onLimits}>
        Limits
      </Button>
      <Button size="xs" variant="default" onClick={onKeys}>
        Keys
      </Button>
    </Group>
  );
}
