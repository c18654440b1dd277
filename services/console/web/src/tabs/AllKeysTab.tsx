import { Card, Group, Stack, Text, TextInput } from "@mantine/core";
import { useMemo, useState } from "react";
import { api, type McpServer, type OwnedKey, type UserRecord } from "../api";
import { EditKeyModal } from "../components/EditKeyModal";
import { Loaded } from "../components/Loaded";
import { McpServersCard } from "../components/McpServersCard";
import { Notice } from "../components/Notice";
import { PickOne } from "../components/PickOne";
import { useFetch } from "../useFetch";
import { KeyTable, ownerLabel } from "./KeyTable";

const STATUSES = [
  { value: "active", label: "Active" },
  { value: "all", label: "All (revoked and expired too)" },
  { value: "blocked", label: "Blocked" },
  { value: "revoked", label: "Revoked" },
  { value: "expired", label: "Expired" },
];
const SORTS = [
  { value: "spend", label: "Spend (highest first)" },
  { value: "last_used", label: "Last used (newest first)" },
  { value: "expires", label: "Expires (soonest first)" },
  { value: "owner", label: "Owner (A–Z)" },
  { value: "name", label: "Name (A–Z)" },
];

/**
 * Keys whose name, masked key or owner (user, team alias or id) contains `search` (any case), of `status`
 * ("blocked": active keys an operator blocked), sorted by `sort`.
 */
export function filterKeys(keys: OwnedKey[], search: string, status: string, sort: string): OwnedKey[] {
  const needle = search.trim().toLowerCase();
  const text = (k: OwnedKey) =>
    [k.key_alias ?? "", k.key_name, ownerLabel(k), k.user_id ?? "", k.team_id ?? ""].join(" ").toLowerCase();
  const ofStatus = (k: OwnedKey) =>
    status === "all" ||
    (status === "blocked" ? k.status === "active" && k.blocked === true : k.status === status);
  const time = (iso: string | null, none: number) => (iso === null ? none : Date.parse(iso));
  const by: Record<string, (a: OwnedKey, b: OwnedKey) => number> = {
    spend: (a, b) => b.spend - a.spend,
    last_used: (a, b) => time(b.last_used_at, 0) - time(a.last_used_at, 0),
    expires: (a, b) => time(a.expires, Infinity) - time(b.expires, Infinity),
    owner: (a, b) => ownerLabel(a).localeCompare(ownerLabel(b)),
    name: (a, b) => (a.key_alias ?? "").localeCompare(b.key_alias ?? ""),
  };
  return keys
    .filter((k) => ofStatus(k) && (needle === "" || text(k).includes(needle)))
    .sort(by[sort] ?? by.spend);
}

/**
 * The operator's Keys view: every key of the platform (of a user, of no user, of a team, the chat's service key)
 * with its owner (a team key: its team), spend, last use, limits and expiry; find, filter by status, sort, edit
 * (with the key's MCP servers and tools, operators only), block or unblock, and revoke; below, the gateway's declared MCP servers and their tools.
 */
export function AllKeysTab() {
  const keys = useFetch<{ keys: OwnedKey[] }>("/api/admin/keys");
  const users = useFetch<{ users: UserRecord[] }>("/api/admin/users");
  const mcp = useFetch<{ servers: McpServer[] }>("/api/admin/mcp-servers");
  const [search, setSearch] = useState("");
  const [status, setStatus] = useState<string | null>("active");
  const [sort, setSort] = useState<string | null>("spend");
  const [editing, setEditing] = useState<OwnedKey | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const shown = useMemo(
    () => filterKeys(keys.data?.keys ?? [], search, status ?? "active", sort ?? "spend"),
    [keys.data, search, status, sort],
  );
  const owner = editing === null ? null : editing.user_id;
  const ceiling = owner == null ? null : (users.data?.users.find((u) => u.user_id === owner) ?? null);
  return (
    <Stack>
      <Text size="sm" c="dimmed">
        Every key of the platform: keys of users, keys of teams, keys of no user (for your own programs) and
        the chat's service key.
      </Text>
      <Group align="flex-end" gap="sm">
        <TextInput
          label="Find a key"
          placeholder="name, sk-…, owner"
          value={search}
          onChange={(e) => setSearch(e.currentTarget.value)}
          w={{ base: "100%", xs: 240 }}
        />
        <PickOne
          label="Status"
          data={STATUSES}
          value={status}
          onChange={setStatus}
          w={{ base: "100%", xs: 220 }}
        />
        <PickOne label="Sort by" data={SORTS} value={sort} onChange={setSort} w={{ base: "100%", xs: 220 }} />
      </Group>
      {saved !== null && <Notice title={saved} onClose={() => setSaved(null)} />}
      <Card withBorder radius="md" p={0}>
        <Loaded result={keys} what="the keys">
          {() =>
            shown.length === 0 ? (
              <Text c="dimmed" ta="center" py="xl">
                No key matches.
              </Text>
            ) : (
              <KeyTable
                keys={shown}
                withOwner
                onEdit={(k) => setEditing(k as OwnedKey)}
                onBlock={async (k, blocked) => {
                  await api("POST", `/api/admin/keys/${k.token}/${blocked ? "block" : "unblock"}`);
                  setSaved(
                    blocked
                      ? `Key ${k.key_alias ?? ""} (${k.key_name}) blocked: its calls are refused until you unblock it.`
                      : `Key ${k.key_alias ?? ""} (${k.key_name}) unblocked.`,
                  );
                  keys.reload();
                }}
                onRevoke={async (k) => {
                  await api("DELETE", `/api/admin/keys/${k.token}`);
                  setSaved(`Key ${k.key_alias ?? ""} (${k.key_name}) revoked.`);
                  keys.reload();
                }}
              />
            )
          }
        </Loaded>
      </Card>
      <McpServersCard result={mcp} />
      {editing !== null && (
        <EditKeyModal
          k={editing}
          path={`/api/admin/keys/${editing.token}`}
          ceiling={ceiling}
          mcp={{ servers: mcp.data?.servers ?? [], permission: editing.object_permission ?? null }}
          onClose={(ok) => {
            if (ok) {
              setSaved(
                `The key ${editing.key_alias ?? editing.key_name} is changed; the change applies to its next call.`,
              );
              keys.reload();
            }
            setEditing(null);
          }}
        />
      )}
    </Stack>
  );
}
