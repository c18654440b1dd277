import { Alert, Modal, Stack, Text } from "@mantine/core";
import { useEffect, useState } from "react";
import { ApiError, api, type ConsoleKey, type McpServer, type ObjectPermission } from "../api";
import { budget, day, perMinute } from "../format";
import { EXPIRIES } from "./GenerateKeyModal";
import { FormButtons, KeyFormFields, KeyNameField } from "./KeyFormFields";
import { type Ceiling, limitErrors, limitRequest, limitValues } from "./LimitFields";
import { grantOf, McpGrantField, permissionOf } from "./McpGrantField";

/** Request fields whose refusals show under their own input. */
const FIELDS = new Set([
  "name",
  "max_budget",
  "budget_duration",
  "rpm_limit",
  "tpm_limit",
  "duration",
  "models",
]);
/** The expiry choice that keeps the key's current expiry. */
const KEEP = "keep";

/**
 * Edits an active key: name, budget and period, per-minute limits (empty = the owner's apply), models (none
 * chosen = every model) and a new expiry counted from today (or the current one kept). The owner's limits
 * (`ceiling`) show as hints; a looser value is refused by the server under its field, never lowered. The
 * browser checks the numbers with the server's own rules first. `path` is where the change is sent
 * (`/api/keys/:token` or `/api/admin/keys/:token`); `onClose(true)` after a save. `mcp` (the operator's All keys
 * only: a user never grants their own key MCP servers) adds the key's MCP servers and tools, sent as
 * `object_permission` when changed.
 */
export function EditKeyModal({
  k,
  path,
  ceiling,
  mcp,
  onClose,
}: {
  k: ConsoleKey;
  path: string;
  ceiling: Ceiling | null;
  mcp?: { servers: McpServer[]; permission: ObjectPermission | null };
  onClose: (saved: boolean) => void;
}) {
  const [name, setName] = useState(k.key_alias ?? "");
  const [limits, setLimits] = useState(limitValues(k));
  const [models, setModels] = useState<string[]>(k.models);
  const [available, setAvailable] = useState<string[]>(k.models);
  const [expiry, setExpiry] = useState<string | null>(KEEP);
  const [grant, setGrant] = useState(grantOf(mcp?.permission ?? null));
  const [grantChanged, setGrantChanged] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [saving, setSaving] = useState(false);
  const [checked, setChecked] = useState(false);
  const invalid = checked ? limitErrors(limits) : {};

  useEffect(() => {
    api<{ models: string[] }>("GET", "/api/models").then(
      (r) => setAvailable([...new Set([...r.models, ...k.models])]),
      () => undefined,
    );
  }, [k.models]);

  const save = async (event: React.FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (name.trim() === "" || Object.keys(limitErrors(limits)).length > 0) return;
    setSaving(true);
    setError(null);
    try {
      await api("POST", path, {
        name: name.trim(),
        ...limitRequest(limits, null),
        models,
        ...(expiry === KEEP || expiry === null ? {} : { duration: expiry }),
        ...(mcp !== undefined && grantChanged ? { object_permission: permissionOf(grant) } : {}),
      });
      onClose(true);
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, String(e), null));
      setSaving(false);
    }
  };
  const fieldError = (param: string) =>
    invalid[param] ?? (error?.param === param ? error.message : undefined);
  return (
    <Modal
      opened
      onClose={() => onClose(false)}
      title={`Edit key ${k.key_alias ?? k.key_name}`}
      size="lg"
      centered
    >
      <form onSubmit={save}>
        <Stack gap="sm">
          {ceiling !== null && (
            <Text size="sm" c="dimmed" data-testid="owner-limits">
              Its owner: budget {budget(ceiling.max_budget, ceiling.budget_duration ?? null)},{" "}
              {perMinute(ceiling.rpm_limit, "requests")}, {perMinute(ceiling.tpm_limit, "tokens")}. A key's
              limits can only be tighter.
            </Text>
          )}
          <KeyNameField
            value={name}
            onChange={setName}
            error={fieldError("name") ?? (checked && name.trim() === "" ? "A key needs a name." : undefined)}
          />
          <KeyFormFields
            limits={limits}
            onLimits={setLimits}
            ceiling={ceiling}
            expiry={expiry}
            onExpiry={setExpiry}
            expiries={[
              { value: KEEP, label: `Keep: ${day(k.expires)}` },
              ...EXPIRIES.map((e) => ({ ...e, label: `${e.label} from today` })),
            ]}
            expiryLabel="Expires"
            models={models}
            onModels={setModels}
            available={available}
            errors={fieldError}
          />
          {mcp !== undefined && (
            <McpGrantField
              servers={mcp.servers}
              grant={grant}
              onGrant={(next) => {
                setGrant(next);
                setGrantChanged(true);
              }}
            />
          )}
          {error !== null && !FIELDS.has(error.param ?? "") && (
            <Alert color="red" title="Not saved">
              {error.message}
            </Alert>
          )}
          <FormButtons submit="Save" busy={saving} onCancel={() => onClose(false)} />
        </Stack>
      </form>
    </Modal>
  );
}
