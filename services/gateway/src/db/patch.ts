import { afterDuration } from "../time/budget-period.js";
import type { Queryable } from "./transaction.js";

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

/** The table a {@link updateRow} changes: its name, the column that names a row, and the columns read back. */
export interface PatchTarget<R> {
  table: string;
  idColumn: string;
  /** The columns a patch may set (see {@link patchAssignments}). */
  allowed: readonly string[];
  /** The columns `RETURNING` reads back, and how a returned row becomes a record. */
  returning: readonly string[];
  fromRow: (row: Record<string, unknown>) => R;
}

/**
 * `UPDATE <table> SET <patch> WHERE <idColumn> = id RETURNING …` ({@link patchAssignments}: `updated_at` set to
 * `now`, a changed `budget_duration` starts a new period). Returns the row as stored after the change, or null
 * when no row has that id. Rejects with the driver's error.
 */
export async function updateRow<R>(
  db: Queryable,
  target: PatchTarget<R>,
  id: string,
  patch: object,
  now: number,
): Promise<R | null> {
  const { sql, params } = patchAssignments({ ...patch }, target.allowed, now, 2);
  const result = await db.query(
    `UPDATE ${target.table} SET ${sql} WHERE ${target.idColumn} = $1 RETURNING ${target.returning.join(", ")}`,
    [id, ...params],
  );
  const row = result.rows[0];
  return row === undefined ? null : target.fromRow(row);
}
