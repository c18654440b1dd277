import {
  Alert,
  Autocomplete,
  Button,
  Code,
  CopyButton,
  Group,
  Modal,
  type OptionsFilter,
  Stack,
  Text,
} from "@mantine/core";
import { useEffect, useRef, useState } from "react";
import {
  ApiError,
  api,
  type ConsoleTeam,
  type CreatedKey,
  type McpServer,
  type Me,
  type UserRecord,
} from "../api";
import { budget, perMinute } from "../format";
import { FormButtons, KeyFormFields, KeyNameField } from "./KeyFormFields";
import { KeySnippets } from "./KeySnippets";
import { limitErrors, limitRequest, NO_LIMITS } from "./LimitFields";
import { grantOf, McpGrantField, permissionOf } from "./McpGrantField";

/** The lifetimes a key may be given (LiteLLM durations), here and in the edit dialog. */
export const EXPIRIES = [
  { value: "7d", label: "7 days" },
  { value: "30d", label: "30 days" },
  { value: "90d", label: "90 days" },
  { value: "180d", label: "180 days" },
  { value: "365d", label: "1 year" },
];

/** Fields whose server errors show under the field itself (and only there). */
const FIELDS = new Set([
  "user_id",
  "name",
  "max_budget",
  "budget_duration",
  "rpm_limit",
  "tpm_limit",
  "duration",
  "models",
]);

/**
 * Admin mode of {@link GenerateKeyModal}: the users a key may belong to, the one chosen first (null: none), and
 * the gateway's MCP servers the key may be granted (administrators only grant MCP servers).
 */
export interface KeyOwners {
  users: UserRecord[];
  userId: string | null;
  mcpServers: McpServer[];
}

/** Users whose id or email contains the typed text (any case). */
const ownerFilter =
  (users: UserRecord[]): OptionsFilter =>
  ({ options, search }) => {
    const needle = search.trim().toLowerCase();
    const email = new Map(users.map((u) => [u.user_id, (u.user_email ?? "").toLowerCase()]));
    return options.filter(
      (o) =>
        "value" in o &&
        (o.value.toLowerCase().includes(needle) || (email.get(o.value) ?? "").includes(needle)),
    );
  };

/**
 * The generate-key dialog: name, optional budget and period, rpm/tpm, expiry (default 90 days), models; the
 * owner's limits are shown as hints. A looser value is sent as typed: the server refuses it and its
 * message shows under the field (a value is never silently lowered). After creation it shows the key once,
 * with its own Copy button and snippets, until "I've saved it".
 *
 * Without `owners` it makes a key of the signed-in chat user (`POST /api/keys`); with `owners` (the Admin
 * view) a key of the user chosen from the list or typed, or of no user when left empty (`POST /api/admin/keys`),
 * with its MCP servers and tools if chosen (`object_permission`).
 * With `team` (the Teams view) a key of that team for its services (`POST /api/teams/:teamId/keys`), bound by
 * the team's limits (shown as the hints).
 */
export function GenerateKeyModal({
  me,
  opened,
  onClose,
  owners,
  team,
}: {
  me: Me;
  opened: boolean;
  onClose: (created: boolean) => void;
  owners?: KeyOwners;
  team?: ConsoleTeam;
}) {
  const [owner, setOwner] = useState("");
  const ownerId = owner.trim();
  const ownerRecord = owners?.users.find((u) => u.user_id === ownerId) ?? null;
  const account = team ?? (owners === undefined ? me.account : ownerRecord);
  const whose =
    team !== undefined
      ? `Team ${team.team_alias ?? team.team_id}`
      : owners === undefined
        ? "Your account"
        : "This user";
  const path =
    team !== undefined
      ? `/api/teams/${encodeURIComponent(team.team_id)}/keys`
      : owners === undefined
        ? "/api/keys"
        : "/api/admin/keys";
  const [name, setName] = useState("");
  const [limits, setLimits] = useState(NO_LIMITS);
  const [expiry, setExpiry] = useState<string | null>("90d");
  const [models, setModels] = useState<string[]>([]);
  const [grant, setGrant] = useState(grantOf(null));
  const [available, setAvailable] = useState<string[]>([]);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  // The new key takes the focus when it appears (a screen reader reads it; the form it replaces is gone).
  const keyBox = useRef<HTMLPreElement>(null);
  useEffect(() => {
    if (created !== null) keyBox.current?.focus();
  }, [created]);
  // The browser's own check shows from the first Generate on, and follows every change after it.
  const [checked, setChecked] = useState(false);
  const invalid = checked ? limitErrors(limits) : {};

  const initialOwner = owners?.userId ?? "";
  useEffect(() => {
    if (opened) setOwner(initialOwner);
  }, [opened, initialOwner]);

  useEffect(() => {
    if (!opened) return;
    api<{ models: string[] }>("GET", "/api/models").then(
      (r) => setAvailable(r.models),
      () => setAvailable([]),
    );
  }, [opened]);

  const reset = () => {
    setName("");
    setLimits(NO_LIMITS);
    setExpiry("90d");
    setModels([]);
    setGrant(grantOf(null));
    setError(null);
    setCreated(null);
    setChecked(false);
  };
  const close = () => {
    const wasCreated = created !== null;
    reset();
    onClose(wasCreated);
  };

  const submit = async (event?: React.FormEvent) => {
    event?.preventDefault();
    if (name.trim() === "" || busy) return;
    setChecked(true);
    if (Object.keys(limitErrors(limits)).length > 0) return;
    setBusy(true);
    setError(null);
    try {
      const key = await api<CreatedKey>("POST", path, {
        ...(owners === undefined ? {} : { user_id: ownerId === "" ? null : ownerId }),
        name: name.trim(),
        ...limitRequest(limits, undefined),
        duration: expiry ?? "90d",
        models: models.length === 0 ? undefined : models,
        ...(owners === undefined ? {} : { object_permission: permissionOf(grant) ?? undefined }),
      });
      setCreated(key);
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, (e as Error).message, null));
    } finally {
      setBusy(false);
    }
  };

  const fieldError = (param: string) =>
    invalid[param] ?? (error?.param === param ? error.message : undefined);
  const formError = error !== null && !FIELDS.has(error.param ?? "") ? error : null;

  if (created !== null) {
    return (
      <Modal
        opened={opened}
        onClose={() => {}}
        withCloseButton={false}
        closeOnClickOutside={false}
        closeOnEscape={false}
        size="xl"
        title={owners === undefined && team === undefined ? "Your new key" : "The new key"}
        centered
      >
        <Stack>
          {/* The default yellow title fails WCAG AA contrast on its light background. */}
          <Alert
            color="yellow"
            title="Copy it now"
            styles={{ title: { color: "var(--mantine-color-dark-7)" } }}
          >
            This is the only time the full key is shown. The console does not keep it; if you lose it, revoke
            it and generate a new one.
          </Alert>
          <Text size="sm" role="status">
            Your new key is shown below, this once.
          </Text>
          <Group gap="xs" align="stretch" wrap="nowrap">
            <Code
              block
              ref={keyBox}
              tabIndex={-1}
              data-testid="new-key"
              fz="md"
              aria-label="Your new key"
              style={{ flex: 1, whiteSpace: "pre-wrap", wordBreak: "break-all", userSelect: "all" }}
            >
              {created.key}
            </Code>
            <CopyButton value={created.key}>
              {({ copied, copy }) => (
                <Button onClick={copy} color={copied ? "teal" : undefined} aria-label="Copy key" miw={92}>
                  {copied ? "Copied" : "Copy key"}
                </Button>
              )}
            </CopyButton>
          </Group>
          <KeySnippets
            gatewayUrl={me.gateway_url}
            apiKey={created.key}
            model={created.models[0] ?? available[0] ?? "general"}
          />
          <Group justify="flex-end">
            <Button onClick={close}>I've saved it</Button>
          </Group>
        </Stack>
      </Modal>
    );
  }

  return (
    <Modal
      opened={opened}
      onClose={close}
      title={
        team === undefined ? "Generate a key" : `Generate a key for team ${team.team_alias ?? team.team_id}`
      }
      size="lg"
      centered
    >
      <form onSubmit={submit}>
        <Stack gap="sm">
          {owners !== undefined && (
            <Autocomplete
              label="User"
              placeholder="none: a key for your own programs"
              description={
                ownerId === ""
                  ? "Empty: a key of no user (the operator's own)."
                  : ownerRecord === null
                    ? "Not in the list: the gateway checks that this user id exists."
                    : `The key belongs to ${ownerRecord.user_email ?? ownerRecord.user_id}.`
              }
              data={owners.users.map((u) => u.user_id)}
              filter={ownerFilter(owners.users)}
              renderOption={({ option }) => {
                const email = owners.users.find((u) => u.user_id === option.value)?.user_email;
                return email == null ? option.value : `${email} (${option.value})`;
              }}
              value={owner}
              onChange={setOwner}
              clearable
              error={fieldError("user_id")}
            />
          )}
          {account !== null && (
            <Text size="sm" c="dimmed" data-testid="account-limits">
              {whose}: budget {budget(account.max_budget, account.budget_duration)},{" "}
              {perMinute(account.rpm_limit, "requests")}, {perMinute(account.tpm_limit, "tokens")}. A key's
              limits can only be tighter.
            </Text>
          )}
          <KeyNameField value={name} onChange={setName} error={fieldError("name")} />
          <KeyFormFields
            limits={limits}
            onLimits={setLimits}
            ceiling={account}
            expiry={expiry}
            onExpiry={setExpiry}
            expiries={EXPIRIES}
            expiryLabel="Expires after"
            models={models}
            onModels={setModels}
            available={available}
            errors={fieldError}
          />
          {owners !== undefined && (
            <McpGrantField servers={owners.mcpServers} grant={grant} onGrant={setGrant} />
          )}
          {formError !== null && (
            <Alert color="red" title="Not generated">
              {formError.message}
            </Alert>
          )}
          <FormButtons submit="Generate" busy={busy} onCancel={close} disabled={name.trim() === ""} />
        </Stack>
      </form>
    </Modal>
  );
}
