import { TextInput } from "@mantine/core";
import { fieldErrors, limitInput, typedNumber } from "@platform/admin-api";
import { count, usd } from "../format";
import { PickOne } from "./PickOne";

/** The budget periods offered (LiteLLM durations), in the key form and the admin's Limits dialog. */
export const PERIODS = [
  { value: "", label: "No period (total)" },
  { value: "1d", label: "Per day" },
  { value: "7d", label: "Per week" },
  { value: "30d", label: "Per 30 days" },
  { value: "1mo", label: "Per calendar month" },
];

/** The form's values as typed: "" = empty (unlimited / no period); USD and per-minute counts as text. */
export interface LimitValues {
  maxBudget: string;
  period: string | null;
  rpm: string;
  tpm: string;
}

/** Empty values (every limit unlimited, no period). */
export const NO_LIMITS: LimitValues = { maxBudget: "", period: "", rpm: "", tpm: "" };

/** The values of a record with LiteLLM's limit fields (null = empty). */
export function limitValues(record: {
  max_budget: number | null;
  budget_duration: string | null;
  rpm_limit: number | null;
  tpm_limit: number | null;
}): LimitValues {
  const text = (v: number | null) => (v === null ? "" : String(v));
  return {
    maxBudget: text(record.max_budget),
    period: record.budget_duration ?? "",
    rpm: text(record.rpm_limit),
    tpm: text(record.tpm_limit),
  };
}

/**
 * The request fields of the values in LiteLLM's names (`max_budget` USD, `budget_duration`, `rpm_limit`,
 * `tpm_limit`); an empty field becomes `empty`: `undefined` (omit: the default) or `null` (clear: unlimited).
 */
export function limitRequest<E extends null | undefined>(values: LimitValues, empty: E) {
  // As typed: never rounded or clamped; text that is not a plain number is NaN, which the schema refuses.
  const num = (v: string) => typedNumber(v) ?? empty;
  return {
    max_budget: num(values.maxBudget),
    budget_duration: values.period === "" || values.period === null ? empty : values.period,
    rpm_limit: num(values.rpm),
    tpm_limit: num(values.tpm),
  };
}

/**
 * The browser's check of the values, with the schema the console's server checks the request with
 * (`limitInput` of `@platform/admin-api`): the console's message per request field name, empty when valid.
 */
export function limitErrors(values: LimitValues): Record<string, string> {
  return fieldErrors(limitInput, limitRequest(values, null));
}

/** The per-minute inputs: form field, label, request name. */
const PER_MINUTE = [
  { field: "rpm", label: "Requests per minute", param: "rpm_limit" },
  { field: "tpm", label: "Tokens per minute", param: "tpm_limit" },
] as const;

/** "unlimited", or "up to $10.00" / "up to 60" under a ceiling. */
const upTo = (max: number | null | undefined, show: (n: number) => string = count) =>
  max == null ? "unlimited" : `up to ${show(max)}`;

/** The owner's limits a key's must stay within (shown as "up to …" hints). */
export type Ceiling = {
  max_budget: number | null;
  budget_duration?: string | null;
  rpm_limit: number | null;
  tpm_limit: number | null;
};

/**
 * The budget (USD), budget period, requests per minute and tokens per minute inputs, as siblings for the
 * caller's grid or stack. `ceiling` (the owner's limits) shows as "up to …" placeholders; `errors` gives a
 * field's server error by its request name (`max_budget`, `budget_duration`, `rpm_limit`, `tpm_limit`).
 * A period set outside the console (e.g. `2w`) stays selectable. The inputs keep exactly what was typed (no
 * clamping, rounding or dropped characters); {@link limitErrors} says what is wrong with it.
 */
export function LimitFields({
  values,
  onChange,
  ceiling,
  budgetLabel = "Budget (USD)",
  errors = () => undefined,
}: {
  values: LimitValues;
  onChange: (next: LimitValues) => void;
  ceiling?: Ceiling | null;
  budgetLabel?: string;
  errors?: (param: string) => string | undefined;
}) {
  const set = (field: keyof LimitValues) => (value: string | null) => onChange({ ...values, [field]: value });
  const typed = (field: keyof LimitValues) => (e: React.ChangeEvent<HTMLInputElement>) =>
    set(field)(e.currentTarget.value);
  const { period } = values;
  const periods =
    period && !PERIODS.some((p) => p.value === period)
      ? [...PERIODS, { value: period, label: period }]
      : PERIODS;
  return (
    <>
      <TextInput
        label={budgetLabel}
        inputMode="decimal"
        autoComplete="off"
        placeholder={upTo(ceiling?.max_budget, usd)}
        value={values.maxBudget}
        onChange={typed("maxBudget")}
        error={errors("max_budget")}
      />
      <PickOne
        label="Budget period"
        data={periods}
        value={period}
        onChange={set("period")}
        error={errors("budget_duration")}
      />
      {PER_MINUTE.map(({ field, label, param }) => (
        <TextInput
          key={field}
          label={label}
          inputMode="numeric"
          autoComplete="off"
          placeholder={upTo(ceiling?.[param])}
          value={values[field]}
          onChange={typed(field)}
          error={errors(param)}
        />
      ))}
    </>
  );
}
