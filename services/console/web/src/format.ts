/**
 * Display formats: USD, token counts, dates, limits, roles. Dates and numbers follow the browser's locale
 * (`undefined` locale = the browser's); amounts are always US dollars, as the gateway books them.
 */

const dollars = new Intl.NumberFormat(undefined, { style: "currency", currency: "USD" });
const smallDollars = new Intl.NumberFormat(undefined, {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});

const tinyDollars = new Intl.NumberFormat(undefined, {
  style: "currency",
  currency: "USD",
  maximumSignificantDigits: 2,
});

/**
 * USD: cents from a dollar on; up to 4 decimals below a dollar (`$0.0092`); below a cent two significant
 * digits, so the smallest call is never shown as $0.00 (`$0.000031`). Zero is `$0.00`.
 */
export function usd(value: number): string {
  const abs = Math.abs(value);
  if (abs === 0 || abs >= 1) return dollars.format(value);
  return abs >= 0.01 ? smallDollars.format(value) : tinyDollars.format(value);
}

/**
 * Round axis ticks from 0 to at least `max` (USD or counts): about `count` steps of 1, 2 or 5 times a power
 * of ten (`0, 0.002, 0.004, 0.006`), never `0.0035`. `[0, 1]` for an empty chart.
 */
export function roundTicks(max: number, count = 4): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * power >= raw) ?? 10) * power;
  const ticks: number[] = [];
  for (let i = 0; ticks.length === 0 || (ticks.at(-1) ?? 0) < max; i++) {
    ticks.push(Number((i * step).toPrecision(12)));
  }
  return ticks;
}

/** The zone the browser shows times in, e.g. `Europe/Berlin`, as the tables name it. */
export const timeZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone;

/** Integer with the locale's thousands separators. */
export const count = (value: number): string => new Intl.NumberFormat(undefined).format(value);

/** A date in the browser's locale (`Nov 23, 2026`, `23 Nov 2026`), or an em dash for null. */
export function day(iso: string | null): string {
  if (iso === null) return "—";
  return new Date(iso).toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
}

/** A UTC calendar day `2026-11-23` as the charts label it (`Nov 23`, `23 Nov`), in the browser's locale. */
export function chartDay(date: string): string {
  return new Date(`${date}T00:00:00Z`).toLocaleDateString(undefined, {
    day: "numeric",
    month: "short",
    timeZone: "UTC",
  });
}

/** A date and time in the browser's locale and time zone, the zone named (`Nov 23, 14:05 GMT+1`). */
export function time(iso: string): string {
  return new Date(iso).toLocaleString(undefined, {
    day: "numeric",
    month: "short",
    hour: "2-digit",
    minute: "2-digit",
    timeZoneName: "short",
  });
}

/**
 * A call's HTTP status in words: "OK" (2xx), "Client left (499)", "Refused (4xx)" (a budget, a rate limit, a
 * guardrail, a model the key may not call), "Failed (5xx)" (the provider failed, its stream broke or timed out).
 */
export function callStatus(status: number): string {
  if (status >= 200 && status < 300) return "OK";
  if (status === 499) return "Client left (499)";
  return status >= 500 ? `Failed (${status})` : `Refused (${status})`;
}

/** The gateway's reasons (a spend row's `reason`: an OpenAI error type or the gateway's name) in words. */
const REASONS: Record<string, string> = {
  budget_exceeded: "budget",
  rate_limit_error: "rate limit",
  guardrail_violation: "guardrail",
  guardrail_unavailable: "guardrail unavailable",
  key_model_access_denied: "model not allowed",
  upstream_error: "provider error",
  timeout: "provider timeout",
  service_unavailable_error: "provider unavailable",
  client_closed_request: "client left",
  client_idle_timeout: "client stopped reading",
  invalid_request_error: "invalid request",
  limits_unavailable: "limits unavailable",
  internal_error: "gateway error",
};

/** Why a call failed, in words (`budget`, `rate limit`, `guardrail`, …); unknown reasons as the gateway names them. */
export function reasonLabel(reason: string): string {
  return REASONS[reason] ?? reason.replaceAll("_", " ");
}

/** A call's status in words with its reason when it failed: "Refused (429): budget", "OK". */
export function callOutcome(status: number, reason: string | null | undefined): string {
  const words = callStatus(status);
  return reason == null || status === 499 ? words : `${words}: ${reasonLabel(reason)}`;
}

/** Today's UTC calendar day, `2026-11-27` (the gateway's days are UTC days). */
export const todayUtc = (now = Date.now()): string => new Date(now).toISOString().slice(0, 10);

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

/** From this share of the budget on, the console warns (every tab for the account, the key list for a key). */
export const BUDGET_WARNING_SHARE = 0.8;

/** Where a budget stands: `ok` below 80 % (or unlimited), `warning` from 80 %, `exhausted` from 100 %. */
export type BudgetState = "ok" | "warning" | "exhausted";

/** The {@link BudgetState} of `spend` (USD) against `maxBudget` (USD, null = unlimited). */
export function budgetState(spend: number, maxBudget: number | null): BudgetState {
  const share = budgetShare(spend, maxBudget);
  if (share === null || share < BUDGET_WARNING_SHARE) return "ok";
  return share >= 1 ? "exhausted" : "warning";
}

/** How the console says a budget's share: "budget exhausted", or "85 % of budget used". */
export function budgetUsed(spend: number, maxBudget: number | null): string {
  const share = budgetShare(spend, maxBudget) ?? 0;
  // Rounded, but never "100 %" before it is all spent.
  return share >= 1 ? "budget exhausted" : `${Math.min(99, Math.round(share * 100))} % of budget used`;
}

/** The one word the console uses for a role, wherever it shows one: "Admin" or "User". */
export const roleLabel = (isAdmin: boolean): string => (isAdmin ? "Admin" : "User");

/** A gateway role (LiteLLM's `proxy_admin`, `proxy_admin_viewer`, `internal_user`, …) in the same words. */
export function gatewayRoleLabel(role: string | null): string {
  if (role === "proxy_admin_viewer") return "Admin (view only)";
  return roleLabel(role === "proxy_admin");
}
