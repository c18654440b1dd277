import { NumberInput, Select } from "@mantine/core";
import { count, usd } from "../format";

/** The budget periods offered (LiteLLM durations), in the key form and the admin's Limits dialog. */
export const PERIODS = [
  { value: "", label: "No period (total)" },
  { value: "1d", label: "Per day" },
  { value: "7d", label: "Per week" },
  { value: "30d", label: "Per 30 days" },
  { value: "1mo", label: "Per calendar month" },
];

/** The form's values: "" = empty (unlimited / no period); numbers in USD and per-minute counts. */
export interface LimitValues {
  maxBudget: string | number;
  period: string | null;
  rpm: string | number;
  tpm: string | number;
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
  return {
    maxBudget: record.max_budget ?? "",
    period: record.budget_duration ?? "",
    rpm: record.rpm_limit ?? "",
    tpm: record.tpm_limit ?? "",
  };
}

/**
 * The request fields of the values in LiteLLM's names (`max_budget` USD, `budget_duration`, `rpm_limit`,
 * `tpm_limit`); an empty field becomes `empty`: `undefined` (omit: the default) or `null` (clear: unlimited).
 */
export function limitRequest<E extends null | undefined>(values: LimitValues, empty: E) {
  const num = (v: string | number) => (v === "" ? empty : Number(v));
  return {
    max_budget: num(values.maxBudget),
    budget_duration: values.period === "" || values.period === null ? empty : values.period,
    rpm_limit: num(values.rpm),
    tpm_limit: num(values.tpm),
  };
}

/** The per-minute inputs: form field, label, request name. */
const PER_MINUTE = [
  { field: "rpm", label: "Requests per minute", param: "rpm_limit" },
  { field: "tpm", label: "Tokens per minute", param: "tpm_limit" },
] as const;

/** "unlimited", or "up to $10.00" / "up to 60" under a ceiling. */
const upTo = (max: number | null | undefined, show: (n: number) => string = count) =>
  max == null ? "unlimited" : `up to ${show(max)}`;

/**
 * The budget (USD), budget period, requests per minute and tokens per minute inputs, as siblings for the
 * caller's grid or stack. `ceiling` (the owner's limits) shows as "up to …" placeholders; `errors` gives a
 * field's server error by its request name (`max_budget`, `budget_duration`, `rpm_limit`, `tpm_limit`).
 * A period set outside the console (e.g. `2w`) stays selectable.
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
  ceiling?: { max_budget: number | null; rpm_limit: number | null; tpm_limit: number | null } | null;
  budgetLabel?: string;
  errors?: (param: string) => string | undefined;
}) {
  const set = (field: keyof LimitValues) => (value: string | number | null) =>
    onChange({ ...values, [field]: value });
  const { period } = values;
  const periods =
    period && !PERIODS.some((p) => p.value === period)
      ? [...PERIODS, { value: period, label: period }]
      : PERIODS;
  return (
    <>
      <NumberInput
        label={budgetLabel}
        min={0}
        decimalScale={2}
        placeholder={upTo(ceiling?.max_budget, usd)}
        value={values.maxBudget}
        onChange={set("maxBudget")}
        error={errors("max_budget")}
      />
      <Select
        label="Budget period"
        data={periods}
        value={period}
        onChange={set("period")}
        allowDeselect={false}
        error={errors("budget_duration")}
      />
      {PER_MINUTE.map(({ field, label, param }) => (
        <NumberInput
          key={field}
          label={label}
          min={0}
          allowDecimal={false}
          placeholder={upTo(ceiling?.[param])}
          value={values[field]}
          onChange={set(field)}
          error={errors(param)}
        />
      ))}
    </>
  );
}
