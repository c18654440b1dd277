import { Alert, Button, Group, Modal, NumberInput, Select, Stack } from "@mantine/core";
import { useState } from "react";
import { ApiError, api, type UserRecord } from "../api";
import { PERIODS } from "./GenerateKeyModal";

const numberOrNull = (v: string | number) => (v === "" ? null : Number(v));

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
  const [maxBudget, setMaxBudget] = useState<string | number>(user.max_budget ?? "");
  const [period, setPeriod] = useState<string | null>(user.budget_duration ?? "");
  const [rpm, setRpm] = useState<string | number>(user.rpm_limit ?? "");
  const [tpm, setTpm] = useState<string | number>(user.tpm_limit ?? "");
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  // A period set outside the console (e.g. `2w`) stays selectable.
  const periods =
    period && !PERIODS.some((p) => p.value === period)
      ? [...PERIODS, { value: period, label: period }]
      : PERIODS;
  const save = async (event: React.FormEvent) => {
    event.preventDefault();
    setSaving(true);
    setError(null);
    try {
      await api("POST", `/api/admin/users/${encodeURIComponent(user.user_id)}`, {
        max_budget: numberOrNull(maxBudget),
        budget_duration: period === "" || period === null ? null : period,
        rpm_limit: numberOrNull(rpm),
        tpm_limit: numberOrNull(tpm),
      });
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
          <NumberInput
            label="Budget (USD)"
            placeholder="unlimited"
            min={0}
            decimalScale={2}
            value={maxBudget}
            onChange={setMaxBudget}
          />
          <Select
            label="Budget period"
            data={periods}
            value={period}
            onChange={setPeriod}
            allowDeselect={false}
          />
          <NumberInput
            label="Requests per minute"
            placeholder="unlimited"
            min={0}
            allowDecimal={false}
            value={rpm}
            onChange={setRpm}
          />
          <NumberInput
            label="Tokens per minute"
            placeholder="unlimited"
            min={0}
            allowDecimal={false}
            value={tpm}
            onChange={setTpm}
          />
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
