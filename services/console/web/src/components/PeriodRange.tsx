import { Group, Stack, TextInput } from "@mantine/core";
import { useState } from "react";
import { todayUtc } from "../format";
import { PeriodPicker } from "./PeriodPicker";

/** Longest range the usage endpoints serve, days. */
const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

/** Why a from/to pair cannot be asked for, or null when it can. */
export function rangeError(from: string, to: string): { field: "from" | "to"; message: string } | null {
  if (Number.isNaN(Date.parse(from))) return { field: "from", message: "Enter a day." };
  if (Number.isNaN(Date.parse(to))) return { field: "to", message: "Enter a day." };
  const span = (Date.parse(to) - Date.parse(from)) / DAY_MS + 1;
  if (span < 1) return { field: "to", message: "The last day cannot be before the first." };
  if (span > MAX_RANGE_DAYS) return { field: "to", message: `At most ${MAX_RANGE_DAYS} days.` };
  return null;
}

/**
 * 7, 30 or 90 days, or a date range (first and last UTC day, both included, as the gateway counts days).
 * Calls `onChange` with the query the usage endpoints take (`days=30`, `from=2026-11-01&to=2026-11-15`), only
 * for a range they can serve; a range they cannot says why under its field.
 */
export function PeriodRange({ onChange }: { onChange: (query: string) => void }) {
  const [choice, setChoice] = useState("30");
  const [from, setFrom] = useState(() => todayUtc(Date.now() - 6 * DAY_MS));
  const [to, setTo] = useState(() => todayUtc());
  const error = rangeError(from, to);
  const pick = (value: string) => {
    setChoice(value);
    if (value !== "range") onChange(`days=${value}`);
    else if (error === null) onChange(`from=${from}&to=${to}`);
  };
  const edit = (nextFrom: string, nextTo: string) => {
    setFrom(nextFrom);
    setTo(nextTo);
    if (rangeError(nextFrom, nextTo) === null) onChange(`from=${nextFrom}&to=${nextTo}`);
  };
  return (
    <Stack gap="xs">
      <PeriodPicker value={choice} onChange={pick} range />
      {choice === "range" && (
        <Group align="flex-start" gap="sm">
          <TextInput
            type="date"
            label="First day (UTC)"
            value={from}
            max={to}
            onChange={(e) => edit(e.currentTarget.value, to)}
            error={error?.field === "from" ? error.message : undefined}
          />
          <TextInput
            type="date"
            label="Last day (UTC)"
            value={to}
            min={from}
            onChange={(e) => edit(from, e.currentTarget.value)}
            error={error?.field === "to" ? error.message : undefined}
          />
        </Group>
      )}
    </Stack>
  );
}
