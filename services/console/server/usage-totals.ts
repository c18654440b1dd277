/**
 * Sums of the gateway's usage totals (`UsageTotals` of `/spend/usage`: USD, tokens, request counts), over every
 * field of the zod schema `usageTotals` in `@platform/admin-api`: a field added there is zeroed, added and kept
 * here without a change to this file.
 */
import { type UsageTotals, usageTotals } from "@platform/admin-api";

/** Zero, sum and copy over a fixed list of numeric fields. */
export interface Summing<T> {
  /** Every field 0. */
  zero(): T;
  /** Field by field `a + b`. */
  add(a: T, b: T): T;
  /** Only the fields (a row's labels, e.g. `model`, left out). */
  pick(row: T): T;
}

/** {@link Summing} over `fields`, each a number. */
export function summing<K extends string>(fields: readonly K[]): Summing<Record<K, number>> {
  type T = Record<K, number>;
  const each = (value: (field: K) => number) => Object.fromEntries(fields.map((f) => [f, value(f)])) as T;
  return {
    zero: () => each(() => 0),
    add: (a, b) => each((f) => a[f] + b[f]),
    pick: (row) => each((f) => row[f]),
  };
}

/** The fields of `usageTotals`, as its schema lists them. */
export const USAGE_TOTALS_FIELDS = Object.keys(usageTotals.shape) as Array<keyof typeof usageTotals.shape>;

/** Zero, sum and copy of {@link UsageTotals}, over {@link USAGE_TOTALS_FIELDS}. */
export const usageSums: Summing<UsageTotals> = summing(USAGE_TOTALS_FIELDS);
