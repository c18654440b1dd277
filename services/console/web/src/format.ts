/** Display formats: USD, token counts, dates, limits. */

/** USD with cents, or more digits for sub-cent amounts (`$0.0015`). */
export function usd(value: number): string {
  if (value !== 0 && Math.abs(value) < 0.01) return `$${value.toPrecision(2)}`;
  return new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(value);
}

/** Integer with thousands separators. */
export const count = (value: number): string => new Intl.NumberFormat("en-US").format(value);

/** `23 Nov 2026`, or an em dash for null. */
export function day(iso: string | null): string {
  if (iso === null) return "—";
  return new Date(iso).toLocaleDateString("en-GB", { day: "numeric", month: "short", year: "numeric" });
}

/** `23 Nov, 14:05`. */
export function time(iso: string): string {
  return new Date(iso).toLocaleString("en-GB", {
    day: "numeric",
    month: "short",
    hour: "2-digit",
    minute: "2-digit",
  });
}

/** A per-minute limit, or "unlimited". */
export const perMinute = (value: number | null, unit: string): string =>
  value === null ? "unlimited" : `${count(value)} ${unit}/min`;

/** A budget with its period: `$10.00 / 30d`, `$10.00 total`, or "unlimited". */
export function budget(maxBudget: number | null, duration: string | null): string {
  if (maxBudget === null) return "unlimited";
  return duration === null ? `${usd(maxBudget)} total` : `${usd(maxBudget)} / ${duration}`;
}

/** Share of the budget used, 0..1+, or null when unlimited. */
export function budgetShare(spend: number, maxBudget: number | null): number | null {
  if (maxBudget === null) return null;
  if (maxBudget === 0) return 1;
  return spend / maxBudget;
}

/** Above this share of the budget every tab shows a warning. */
export const BUDGET_WARNING_SHARE = 0.8;
