import { afterDuration } from "../time/budget-period.js";

/**
 * Builds `SET a = $n, …` for the defined fields of a patch whose keys are column names; only columns listed in
 * `allowed` are used (anything else is ignored, so a patch can never name arbitrary SQL). `updated_at` is set
 * to `now`; a changed `budget_duration` starts a new budget period at `now` (spend is kept).
 * @param firstParam number of the first placeholder (`$firstParam`).
 */
export function patchAssignments(
  patch: Record<string, unknown>,
  allowed: readonly string[],
  now: number,
  firstParam: number,
): { sql: string; params: unknown[] } {
  const iso = (ms: number) => new Date(ms).toISOString();
  const sets: string[] = [];
  const params: unknown[] = [];
  const set = (column: string, value: unknown) => {
    params.push(value);
    sets.push(`${column} = $${firstParam + params.length - 1}`);
  };
  for (const column of allowed) {
    const value = patch[column];
    if (value === undefined) continue;
    const json = (column === "metadata" || column === "object_permission") && value !== null;
    set(column, json ? JSON.stringify(value) : value);
    if (column === "budget_duration") {
      set("budget_reset_at", value === null ? null : iso(afterDuration(now, value as string)));
    }
  }
  set("updated_at", iso(now));
  return { sql: sets.join(", "), params };
}
