import { Alert, Button, Group, Modal, Stack } from "@mantine/core";
import { useState } from "react";
import { ApiError, api, type UserRecord } from "../api";
import { LimitFields, limitRequest, limitValues } from "./LimitFields";

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
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const save = async (event: React.FormEvent) => {
    event.preventDefault();
    setSaving(true);
    setError(null);
    try {
      await api("POST", `/api/admin/users/${encodeURIComponent(user.user_id)}`, limitRequest(limits, null));
      onClose(who);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
      setSaving(false);
    }
  };
  return (
    <Modal opened onClose={() => onClose(null)} title={`Limits of ${who}`} centered>
      <form onSubmit={save}>
        <Stack gap="sm">
          <LimitFields values={limits} onChange={setLimits} />
          {error !== null && <Alert color="red">{error}</Alert>}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => onClose(null)} disabled={saving}>
              Cancel
            </Button>
            <Button type="submit" loading={saving}>
              Save
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
