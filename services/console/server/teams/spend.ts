/**
 * A team's spend over the last `days` UTC days, by member, key and model, computed in the console from what the
 * gateway answers today: `/team/info` (the team's keys, whose `user_id` is the member a key belongs to, null for
 * a service key) and `/spend/usage?api_key=` per key. {@link teamSpend} is the one place to swap for a
 * `/spend/logs?team_id=` query once the gateway filters spend by team.
 */
import {
  type AdminApiClient,
  type KeyRecord,
  keyRecord,
  type TeamInfoResponse,
  type UsageResponse,
  type UsageTotals,
} from "@platform/admin-api";
import type { UsagePeriod } from "../usage-period.js";

/** Most keys whose usage is read for one team (one `/spend/usage` call each, 4 at a time). */
const MAX_KEYS = 200;
const PARALLEL = 4;

/** A team's spend (USD) and tokens over `days` days: totals, per member, per key, per model alias. */
export interface TeamSpend {
  days: number;
  totals: UsageTotals;
  /** Per member (`user_id` null: the team's service keys), highest spend first. */
  by_member: Array<UsageTotals & { user_id: string | null; user_email: string | null }>;
  /** Per key, highest spend first. */
  by_key: Array<
    UsageTotals & { api_key: string; key_name: string; key_alias: string | null; user_id: string | null }
  >;
  /** Per model alias, highest spend first. */
  by_model: Array<UsageTotals & { model: string }>;
}

const ZERO: UsageTotals = {
  spend: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  cached_tokens: 0,
  requests: 0,
  failed_requests: 0,
};

/** The sum of two totals. */
function add(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    spend: a.spend + b.spend,
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    cached_tokens: a.cached_tokens + b.cached_tokens,
    requests: a.requests + b.requests,
    failed_requests: a.failed_requests + b.failed_requests,
  };
}

/** Adds `totals` to the entry `name` of `into` (created from `fresh` when new). */
function book<T extends UsageTotals>(
  into: Map<string, T>,
  name: string,
  fresh: () => T,
  totals: UsageTotals,
) {
  const entry = into.get(name) ?? fresh();
  into.set(name, { ...entry, ...add(entry, totals) });
}

const bySpend = <T extends UsageTotals>(rows: Iterable<T>) => [...rows].sort((a, b) => b.spend - a.spend);

/** Only the totals of a usage row (no labels). */
const totalsOf = (row: UsageTotals): UsageTotals => ({
  spend: row.spend,
  prompt_tokens: row.prompt_tokens,
  completion_tokens: row.completion_tokens,
  total_tokens: row.total_tokens,
  cached_tokens: row.cached_tokens,
  requests: row.requests,
  failed_requests: row.failed_requests,
});

/** The team's keys as records (the `/key/info` shape `/team/info` lists them in), at most {@link MAX_KEYS}. */
export function teamKeys(info: TeamInfoResponse): KeyRecord[] {
  return info.keys.flatMap((k) => {
    const parsed = keyRecord.safeParse(k);
    return parsed.success ? [parsed.data] : [];
  });
}

/**
 * The team's spend over `period` (`days` days, 1..366, ending with `end_date` or today), by member, key and model; members named by their e-mail
 * from the team's memberships.
 * @throws AdminApiError when the gateway fails.
 */
export async function teamSpend(
  gateway: AdminApiClient,
  info: TeamInfoResponse,
  period: UsagePeriod,
): Promise<TeamSpend> {
  const { days, end_date } = period;
  const keys = teamKeys(info).slice(0, MAX_KEYS);
  const usages: UsageResponse[] = [];
  for (let i = 0; i < keys.length; i += PARALLEL) {
    const batch = keys.slice(i, i + PARALLEL);
    usages.push(
      ...(await Promise.all(batch.map((k) => gateway.usage({ api_key: k.token, days, end_date })))),
    );
  }
  const emails = new Map(info.team_memberships.map((m) => [m.user_id, m.user_email]));
  const members = new Map<string, TeamSpend["by_member"][number]>();
  const models = new Map<string, TeamSpend["by_model"][number]>();
  const byKey: TeamSpend["by_key"] = [];
  for (const m of info.team_memberships) {
    book(members, m.user_id, () => ({ ...ZERO, user_id: m.user_id, user_email: m.user_email }), ZERO);
  }
  let totals = ZERO;
  keys.forEach((key, i) => {
    const usage = usages[i] as UsageResponse;
    totals = add(totals, usage.totals);
    const owner = key.user_id ?? null;
    byKey.push({
      ...totalsOf(usage.totals),
      api_key: key.token,
      key_name: key.key_name,
      key_alias: key.key_alias,
      user_id: owner,
    });
    book(
      members,
      owner ?? "",
      () => ({ ...ZERO, user_id: owner, user_email: owner === null ? null : (emails.get(owner) ?? null) }),
      usage.totals,
    );
    for (const m of usage.by_model) book(models, m.model, () => ({ ...ZERO, model: m.model }), totalsOf(m));
  });
  return {
    days,
    totals,
    by_member: bySpend(members.values()),
    by_key: bySpend(byKey),
    by_model: bySpend(models.values()),
  };
}
