/**
 * A team's spend over a period, by member, key and model: the gateway's `/spend/usage?team_id=` (the calls of
 * the team's keys), with `/team/info` naming each key's member (`user_id`, null for a service key).
 */
import {
  type AdminApiClient,
  type KeyRecord,
  keyRecord,
  type TeamInfoResponse,
  type UsageTotals,
} from "@platform/admin-api";
import type { UsagePeriod } from "../usage-period.js";
import { usageSums } from "../usage-totals.js";

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

const ZERO = usageSums.zero();

/** Adds `totals` to the entry `name` of `into` (created from `fresh` when new). */
function book<T extends UsageTotals>(
  into: Map<string, T>,
  name: string,
  fresh: () => T,
  totals: UsageTotals,
) {
  const entry = into.get(name) ?? fresh();
  into.set(name, { ...entry, ...usageSums.add(entry, totals) });
}

const bySpend = <T extends UsageTotals>(rows: Iterable<T>) => [...rows].sort((a, b) => b.spend - a.spend);

const totalsOf = usageSums.pick;

/** The team's keys as records (the `/key/info` shape `/team/info` lists them in). */
export function teamKeys(info: TeamInfoResponse): KeyRecord[] {
  return info.keys.flatMap((k) => {
    const parsed = keyRecord.safeParse(k);
    return parsed.success ? [parsed.data] : [];
  });
}

/**
 * The team's spend over `period` (`days` days, 1..366, ending with `end_date` or today), by member, key and
 * model, from one `/spend/usage?team_id=` read; members named by their e-mail from the team's memberships, each
 * key's member from `/team/info`'s keys (a key the team no longer lists counts as a service key).
 * @throws AdminApiError when the gateway fails.
 */
export async function teamSpend(
  gateway: AdminApiClient,
  info: TeamInfoResponse,
  period: UsagePeriod,
): Promise<TeamSpend> {
  const { days, end_date } = period;
  const usage = await gateway.usage({ team_id: info.team_id, days, end_date });
  const emails = new Map(info.team_memberships.map((m) => [m.user_id, m.user_email]));
  const members = new Map<string, TeamSpend["by_member"][number]>();
  for (const m of info.team_memberships) {
    book(members, m.user_id, () => ({ ...ZERO, user_id: m.user_id, user_email: m.user_email }), ZERO);
  }
  // Every key the team lists, used or not; then the usage rows by key hash.
  const keys = new Map<string, TeamSpend["by_key"][number]>();
  for (const key of teamKeys(info)) {
    const entry = { ...ZERO, api_key: key.token, key_name: key.key_name, key_alias: key.key_alias };
    keys.set(key.token, { ...entry, user_id: key.user_id ?? null });
  }
  for (const row of usage.by_key) {
    if (row.api_key === null) continue;
    const known = keys.get(row.api_key);
    const name = { key_name: row.key_name ?? row.api_key, key_alias: row.key_alias };
    keys.set(row.api_key, {
      ...totalsOf(row),
      api_key: row.api_key,
      ...(known === undefined ? name : { key_name: known.key_name, key_alias: known.key_alias }),
      user_id: known?.user_id ?? null,
    });
  }
  for (const key of keys.values()) {
    const owner = key.user_id;
    const fresh = () => ({
      ...ZERO,
      user_id: owner,
      user_email: owner === null ? null : (emails.get(owner) ?? null),
    });
    book(members, owner ?? "", fresh, totalsOf(key));
  }
  return {
    days,
    totals: totalsOf(usage.totals),
    by_member: bySpend(members.values()),
    by_key: bySpend(keys.values()),
    by_model: bySpend(usage.by_model.map((m) => ({ ...totalsOf(m), model: m.model }))),
  };
}
