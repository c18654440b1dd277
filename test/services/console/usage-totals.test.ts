/**
 * services/console/server/usage-totals.ts: zero, sum and copy of the gateway's usage totals cover every field of
 * the `usageTotals` schema, so that a field added to the schema is summed in team spend without another change.
 */
import { usageTotals } from "@platform/admin-api";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { summing, USAGE_TOTALS_FIELDS, usageSums } from "../../../services/console/server/usage-totals.js";

/** A totals row with a distinct value per field (field i: i + 1 + `offset`), valid for the schema. */
function row(fields: readonly string[], offset: number) {
  return Object.fromEntries(fields.map((f, i) => [f, i + 1 + offset]));
}

describe("usage totals sums", () => {
  it("covers every field of the usageTotals schema", () => {
    expect([...USAGE_TOTALS_FIELDS].sort()).toEqual(Object.keys(usageTotals.shape).sort());
    const a = usageTotals.parse(row(USAGE_TOTALS_FIELDS, 0));
    const b = usageTotals.parse(row(USAGE_TOTALS_FIELDS, 100));
    const sum = usageSums.add(a, b);
    for (const field of Object.keys(usageTotals.shape)) {
      expect(sum[field], field).toBe((a[field] as number) + (b[field] as number));
      expect(usageSums.zero()[field], field).toBe(0);
    }
    expect(usageTotals.safeParse(sum).success).toBe(true);
  });

  it("copies the totals of a labelled row and leaves its labels out", () => {
    const labelled: Record<string, unknown> = {
      ...row(USAGE_TOTALS_FIELDS, 7),
      model: "general",
      date: "2026-11-27",
    };
    const picked = usageSums.pick(usageTotals.parse(labelled));
    expect(Object.keys(picked).sort()).toEqual([...USAGE_TOTALS_FIELDS].sort());
    for (const field of USAGE_TOTALS_FIELDS) expect(picked[field]).toBe(labelled[field]);
  });

  it("sums a field added to the schema", () => {
    const extended = usageTotals.extend({ reasoning_tokens: z.number() });
    const fields = Object.keys(extended.shape);
    const sums = summing(fields);
    const total = sums.add(row(fields, 0), row(fields, 10));
    expect(total.reasoning_tokens).toBe(fields.length + fields.length + 10);
    expect(Object.keys(sums.zero())).toContain("reasoning_tokens");
  });
});
