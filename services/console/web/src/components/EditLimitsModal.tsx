import { Alert, Modal, Stack } from "@mantine/core";
import { useState } from "react";
import { ApiError, api, type UserRecord } from "../api";
import { FormButtons } from "./KeyFormFields";
import { LimitFields, limitErrors, limitRequest, limitValues } from "./LimitFields";

/** Request fields whose refusals show under their own input. */
const LIMIT_PARAMS = new Set(["max_budget", "budget_duration", "rpm_limit", "tpm_limit"]);

/**
 * An administrator raises or lowers a user's budget, budget period (the same choices as the key form) and
 * per-minute limits (empty = unlimited). Save shows progress; `onClose(savedEmail)` reports a success.
 */
export function EditLimitsModal({
  user,
  onClose,
}: {
  user: UserRecord;
  onClose: (saved: string | null) => void;
}) {
  const who = user.user_email ?? user.user_id;
  const [limits, setLimits] = useState(limitValues(user));
  const [error, setError] = useState<ApiError | null>(null);
  const [saving, setSaving] = useState(false);
  // The browser's own check shows from the first Save on, and follows every change after it.
  const [checked, setChecked] = useState(false);
  const invalid = checked ? limitErrors(limits) : {};
  const save = async (event: React.FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (Object.keys(limitErrors(limits)).length > 0) return;
    setSaving(true);
    setError(null);
    try {
      await api("POST", `/api/admin/users/${encodeURIComponent(user.user_id)}`, limitRequest(limits, null));
      onClose(who);
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, String(e), null));
      setSaving(false);
    }
  };
  return (
    <Modal opened onClose={() => onClose(null)} title={`Limits of ${who}`} centered>
      <form onSubmit={save}>
        <Stack gap="sm">
          <LimitFields
            values={limits}
            onChange={setLimits}
            errors={(param) => invalid[param] ?? (error?.param === param ? error.message : undefined)}
          />
          {error !== null && !LIMIT_PARAMS.has(error.param ?? "") && (
            <Alert color="red">{error.message}</Alert>
          )}
          <FormButtons submit="Save" busy={saving} onCancel={() => onClose(null)} />
        </Stack>
      </form>
    </Modal>
  );
}
