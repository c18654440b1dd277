import { Alert, Button, Card, Group, Loader, Select, Stack, Table, Text, TextInput } from "@mantine/core";
import type { AuditLogEntry, AuditLogsResponse } from "@platform/admin-api";
import { useState } from "react";
import type { UserRecord } from "../api";
import { time, timeZone } from "../format";
import { useFetch } from "../useFetch";

const ACTIONS = ["key.generate", "key.update", "key.delete", "user.new", "user.update"];
const PAGE_SIZE = 50;

/** `{a: 1}` → `a: 1`, one field per line, for the before/after columns. */
const fields = (value: Record<string, unknown> | null) =>
  value === null
    ? "—"
    : Object.entries(value)
        .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
        .join("\n");

/**
 * A person as the audit table names them: the e-mail of a user id (`console:user:<id>` actors too), else the
 * id as recorded (`master_key`, `console:operator:master-key`).
 */
export function personLabel(id: string | null, emails: ReadonlyMap<string, string | null>): string | null {
  if (id === null) return null;
  const user = /^console:user:(.+)$/.exec(id)?.[1];
  const email = emails.get(user ?? id);
  if (email == null) return id;
  return user === undefined ? email : `${email} (console)`;
}

/**
 * Audit: who changed which key or user, when (in the browser's time zone, named), and what changed (the
 * gateway's audit log), newest first; people by e-mail. The table scrolls sideways inside its card.
 */
export function AuditTab() {
  const [actor, setActor] = useState("");
  const [userId, setUserId] = useState("");
  const [action, setAction] = useState<string | null>(null);
  const [page, setPage] = useState(1);
  const query = new URLSearchParams({ page: String(page), page_size: String(PAGE_SIZE) });
  if (actor.trim() !== "") query.set("actor", actor.trim());
  if (userId.trim() !== "") query.set("user_id", userId.trim());
  if (action !== null) query.set("action", action);
  const logs = useFetch<AuditLogsResponse>(`/api/admin/audit?${query}`);
  const users = useFetch<{ users: UserRecord[] }>("/api/admin/users");
  const emails = new Map((users.data?.users ?? []).map((u) => [u.user_id, u.user_email]));
  const filter = (set: (v: string) => void) => (event: { currentTarget: { value: string } }) => {
    set(event.currentTarget.value);
    setPage(1);
  };
  return (
    <Stack>
      <Group align="end">
        <TextInput
          label="Actor"
          placeholder="master_key, console:user:…"
          value={actor}
          onChange={filter(setActor)}
        />
        <TextInput label="User" placeholder="user id" value={userId} onChange={filter(setUserId)} />
        <Select
          label="Action"
          placeholder="any"
          data={ACTIONS}
          value={action}
          clearable
          onChange={(v) => {
            setAction(v);
            setPage(1);
          }}
        />
      </Group>
      {logs.error !== null && <Alert color="red">{logs.error}</Alert>}
      {logs.data === null ? (
        <Loader size="sm" />
      ) : (
        <Card withBorder radius="md" p={0}>
          <Table.ScrollContainer
            minWidth={1240}
            type="native"
            // A keyboard reaches the columns scrolled out of sight (the table has nothing else to focus).
            tabIndex={0}
            role="region"
            aria-label="Audit log (scrolls sideways)"
          >
            <Table striped data-testid="audit-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Time ({timeZone()})</Table.Th>
                  <Table.Th>Actor</Table.Th>
                  <Table.Th>Action</Table.Th>
                  <Table.Th>Target</Table.Th>
                  <Table.Th>Before</Table.Th>
                  <Table.Th>After</Table.Th>
                  <Table.Th>From</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {logs.data.logs.map((row: AuditLogEntry) => (
                  <Table.Tr key={row.id}>
                    <Table.Td>{time(row.created_at)}</Table.Td>
                    <Table.Td>{personLabel(row.actor, emails)}</Table.Td>
                    <Table.Td>{row.action}</Table.Td>
                    <Table.Td>
                      {[
                        row.key_alias,
                        row.key_hash_prefix && `${row.key_hash_prefix}…`,
                        personLabel(row.user_id, emails),
                      ]
                        .filter(Boolean)
                        .join(" · ")}
                    </Table.Td>
                    <Table.Td style={{ whiteSpace: "pre-wrap" }}>{fields(row.before)}</Table.Td>
                    <Table.Td style={{ whiteSpace: "pre-wrap" }}>{fields(row.after)}</Table.Td>
                    <Table.Td>{row.source_ip}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
          {logs.data.logs.length === 0 && (
            <Text p="md" c="dimmed">
              No audit entries match.
            </Text>
          )}
        </Card>
      )}
      {logs.data !== null && logs.data.total_pages > 1 && (
        <Group>
          <Button variant="default" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Newer
          </Button>
          <Text size="sm">
            Page {page} of {logs.data.total_pages} ({logs.data.total} entries)
          </Text>
          <Button
            variant="default"
            disabled={page >= logs.data.total_pages}
            onClick={() => setPage(page + 1)}
          >
            Older
          </Button>
        </Group>
      )}
    </Stack>
  );
}
