/**
 * Spend by team over the last 30 UTC days, in the shape of LiteLLM's `GET /global/spend/teams`
 * (litellm/proxy/spend_tracking/spend_management_endpoints.py in BerriAI/litellm): `daily_spend` (one entry per
 * day with spend, `{date, <team>: USD, …}`), `teams` (the teams named there) and `total_spend_per_team` (the ten
 * teams that spent most, most first). A team is named by its alias, else its id; calls of keys without a team
 * count under `Unassigned`, as LiteLLM names them.
 */
import type { Queryable } from "../db/transaction.js";

/** How LiteLLM names the spend of keys without a team. */
export const UNASSIGNED_TEAM = "Unassigned";

const DAY_MS = 86_400_000;
const REPORT_DAYS = 30;
const TOP_TEAMS = 10;

/** USD rounded to 10 decimal places (a report of sums, not of float noise). */
const usd = (value: number) => Math.round(value * 1e10) / 1e10;

/**
 * The report for the 30 UTC days ending on the day of `now` (epoch ms). Money in USD.
 * @returns `{daily_spend, teams, total_spend_per_team: [{team_id, team_alias, total_spend}]}` (`team_id` and
 *   `team_alias` null for `Unassigned`).
 */
export async function globalSpendByTeam(db: Queryable, now: number) {
  const firstDay = Math.floor(now / DAY_MS) * DAY_MS - (REPORT_DAYS - 1) * DAY_MS;
  const { rows } = await db.query<{
    day: string;
    team_id: string | null;
    team_alias: string | null;
    spend: number;
  }>(
    `SELECT to_char(date_trunc('day', s.start_time AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, s.team_id,
       t.team_alias, sum(s.spend)::float8 AS spend
     FROM spend_logs s LEFT JOIN teams t ON t.team_id = s.team_id
     WHERE s.start_time >= $1
     GROUP BY 1, 2, 3 ORDER BY 1`,
    [new Date(firstDay).toISOString()],
  );
  const daily = new Map<string, Record<string, number | string>>();
  const totals = new Map<
    string,
    { team_id: string | null; team_alias: string | null; total_spend: number }
  >();
  for (const row of rows) {
    const name = row.team_alias ?? row.team_id ?? UNASSIGNED_TEAM;
    let day = daily.get(row.day);
    if (day === undefined) {
      day = { date: row.day };
      daily.set(row.day, day);
    }
    day[name] = usd(Number(day[name] ?? 0) + row.spend);
    const total = totals.get(name) ?? { team_id: row.team_id, team_alias: row.team_alias, total_spend: 0 };
    total.total_spend = usd(total.total_spend + row.spend);
    totals.set(name, total);
  }
  return {
    daily_spend: [...daily.values()],
    teams: [...totals.keys()],
    total_spend_per_team: [...totals.values()]
      .sort((x, y) => y.total_spend - x.total_spend)
      .slice(0, TOP_TEAMS),
  };
}
