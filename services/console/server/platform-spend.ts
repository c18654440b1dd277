/**
 * Platform-wide spend for the Admin view: per UTC day and per model over the last `days` days, summed over
 * every user's `/spend/usage` (the gateway's admin API has no platform-wide aggregate yet, so this costs one
 * call per user; requests made with the master key or with keys of no user are not included).
 */
import type { AdminApiClient, UsageResponse, UsageTotals, UserRecord } from "@platform/admin-api";

/** Most users read (pages of 100). */
const MAX_USERS = 2000;

/** Every gateway user, page by page, at most {@link MAX_USERS}. */
export async function allUsers(gateway: AdminApiClient): Promise<UserRecord[]> {
  const users: UserRecord[] = [];
  for (let page = 1; users.length < MAX_USERS; page++) {
    const result = await gateway.listUsers({ page, page_size: 100 });
    users.push(...result.users);
    if (page >= result.total_pages) break;
  }
  return users;
}

const zero = (): UsageTotals => ({
  spend: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  requests: 0,
});
function add(into: UsageTotals, from: UsageTotals): void {
  into.spend += from.spend;
  into.prompt_tokens += from.prompt_tokens;
  into.completion_tokens += from.completion_tokens;
  into.total_tokens += from.total_tokens;
  into.requests += from.requests;
}

/** Sums usage reports (same `days`) into platform totals, per day (oldest first) and per model (by spend). */
export function sumUsage(reports: UsageResponse[], days: number) {
  const totals = zero();
  const daily = new Map<string, UsageTotals>();
  const byModel = new Map<string, UsageTotals>();
  for (const report of reports) {
    add(totals, report.totals);
    for (const day of report.daily) {
      const entry = daily.get(day.date) ?? zero();
      add(entry, day);
      daily.set(day.date, entry);
    }
    for (const model of report.by_model) {
      const entry = byModel.get(model.model) ?? zero();
      add(entry, model);
      byModel.set(model.model, entry);
    }
  }
  return {
    days,
    totals,
    daily: [...daily].sort(([a], [b]) => a.localeCompare(b)).map(([date, t]) => ({ date, ...t })),
    by_model: [...byModel].map(([model, t]) => ({ model, ...t })).sort((a, b) => b.spend - a.spend),
  };
}

/** Platform spend over the last `days` days (see the module comment). */
export async function platformSpend(gateway: AdminApiClient, days: number) {
  const users = await allUsers(gateway);
  const reports = await Promise.all(users.map((u) => gateway.usage({ user_id: u.user_id, days })));
  return { ...sumUsage(reports, days), users: users.length };
}
