/**
 * The period of the usage endpoints and the CSV exports: `?days=7|30|90` (ending today), or a date range
 * `?from=YYYY-MM-DD&to=YYYY-MM-DD` (UTC days, both included, at most {@link MAX_RANGE_DAYS} days; the gateway's
 * days are UTC days). Either way the gateway is asked for `days` days ending with `end_date`.
 */
import { utcDay } from "@platform/admin-api";
import { z } from "zod";

/** The periods the console offers, in days. */
export const USAGE_PERIODS = [7, 30, 90] as const;
/** Longest date range, days (the gateway's `/spend/usage` limit). */
export const MAX_RANGE_DAYS = 366;

const DAY_MS = 86_400_000;

/** A period as the gateway is asked for it: `days` UTC days ending with `end_date` (undefined: today). */
export interface UsagePeriod {
  days: number;
  end_date?: string;
  /** The first day (`YYYY-MM-DD`) when a range was given. */
  from?: string;
}

/**
 * `?days=` or `?from=&to=`, parsed into a {@link UsagePeriod}; `days` defaults to 30. Errors (as
 * `parseInput` reports them, 400 naming the field): a period other than 7, 30 or 90; `from` without `to` or
 * the reverse; a day that does not exist; `to` before `from`; a range over {@link MAX_RANGE_DAYS} days.
 */
export const usagePeriod = z
  .object({
    days: z.coerce
      .number()
      .refine((d) => (USAGE_PERIODS as readonly number[]).includes(d), { message: "expected 7, 30 or 90" })
      .optional(),
    from: utcDay.optional(),
    to: utcDay.optional(),
  })
  .superRefine((q, ctx) => {
    if ((q.from === undefined) !== (q.to === undefined)) {
      const param = q.from === undefined ? "from" : "to";
      ctx.addIssue({ code: "custom", path: [param], message: "give both from and to (YYYY-MM-DD)" });
    } else if (q.from !== undefined && q.days !== undefined) {
      ctx.addIssue({ code: "custom", path: ["days"], message: "give either days or from and to" });
    } else if (q.from !== undefined && q.to !== undefined) {
      const span = (Date.parse(q.to) - Date.parse(q.from)) / DAY_MS + 1;
      if (span < 1) ctx.addIssue({ code: "custom", path: ["to"], message: "to must not be before from" });
      if (span > MAX_RANGE_DAYS)
        ctx.addIssue({ code: "custom", path: ["to"], message: `at most ${MAX_RANGE_DAYS} days` });
    }
  })
  .transform((q): UsagePeriod => {
    if (q.from === undefined || q.to === undefined) return { days: q.days ?? 30 };
    return { days: (Date.parse(q.to) - Date.parse(q.from)) / DAY_MS + 1, end_date: q.to, from: q.from };
  });

/**
 * The period's bounds for `/spend/logs`: `start_date` (an ISO time, or the range's first day) and `end_date`
 * (the range's last day, whole; none when the period ends today). `now` epoch ms.
 */
export function logsRange(period: UsagePeriod, now: number): { start_date: string; end_date?: string } {
  if (period.from !== undefined && period.end_date !== undefined) {
    return { start_date: period.from, end_date: period.end_date };
  }
  return { start_date: new Date(now - period.days * DAY_MS).toISOString() };
}

/** How a period is named in a file name: `30d`, or `2026-11-01_2026-11-15`. */
export const periodName = (period: UsagePeriod): string =>
  period.from === undefined ? `${period.days}d` : `${period.from}_${period.end_date}`;
