import { Button, Group, MultiSelect, SimpleGrid, TextInput } from "@mantine/core";
import { type Ceiling, LimitFields, type LimitValues } from "./LimitFields";
import { PickOne } from "./PickOne";

/**
 * The limit, expiry and model inputs of the generate and edit dialogs, in a two-column grid: budget, period,
 * requests and tokens per minute (`ceiling`: the owner's, as hints), the expiry choices, and the models (none
 * chosen = every model). `errors` gives a field's message by its request name.
 */
export function KeyFormFields({
  limits,
  onLimits,
  ceiling,
  expiry,
  onExpiry,
  expiries,
  expiryLabel,
  models,
  onModels,
  available,
  errors,
}: {
  limits: LimitValues;
  onLimits: (next: LimitValues) => void;
  ceiling: Ceiling | null;
  expiry: string | null;
  onExpiry: (next: string | null) => void;
  expiries: Array<{ value: string; label: string }>;
  expiryLabel: string;
  models: string[];
  onModels: (next: string[]) => void;
  available: string[];
  errors: (param: string) => string | undefined;
}) {
  return (
    <SimpleGrid cols={{ base: 1, sm: 2 }}>
      <LimitFields
        values={limits}
        onChange={onLimits}
        ceiling={ceiling}
        budgetLabel="Budget (USD, optional)"
        errors={errors}
      />
      <PickOne
        label={expiryLabel}
        data={expiries}
        value={expiry}
        onChange={onExpiry}
        error={errors("duration")}
      />
      <ModelsSelect models={models} onModels={onModels} available={available} error={errors("models")} />
    </SimpleGrid>
  );
}

/** The models a key or team may call, chosen from `available` (none chosen = every model). */
export function ModelsSelect({
  models,
  onModels,
  available,
  error,
}: {
  models: string[];
  onModels: (next: string[]) => void;
  available: string[];
  error: string | undefined;
}) {
  return (
    <MultiSelect
      label="Models"
      placeholder={models.length === 0 ? "all models" : undefined}
      data={available}
      value={models}
      onChange={onModels}
      clearable
      error={error}
    />
  );
}

/** A form's Cancel and submit buttons, right-aligned. */
export function FormButtons({
  submit,
  busy,
  onCancel,
  disabled = false,
}: {
  submit: string;
  busy: boolean;
  onCancel: () => void;
  disabled?: boolean;
}) {
  return (
    <Group justify="flex-end" mt="sm">
      <Button variant="default" onClick={onCancel} disabled={busy}>
        Cancel
      </Button>
      <Button type="submit" loading={busy} disabled={disabled}>
        {submit}
      </Button>
    </Group>
  );
}

/**
 * A key's name (its `key_alias`), required, focused when the dialog opens; `error`: the check's or the server's
 * message under it.
 */
export function KeyNameField({
  value,
  onChange,
  error,
}: {
  value: string;
  onChange: (name: string) => void;
  error: string | undefined;
}) {
  return (
    <TextInput
      label="Name"
      placeholder="e.g. laptop, ci-pipeline"
      required
      value={value}
      onChange={(e) => onChange(e.currentTarget.value)}
      error={error}
      data-autofocus
    />
  );
}
