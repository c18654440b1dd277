/**
 * Reads of the spend log: raw rows (`/spend/logs`) and the usage aggregates the key console shows, for one
 * user or one key. Days are UTC calendar days; money USD; tokens prompt + completion.
 */
import { LONG_CONTEXT_THRESHOLD } from "../cost/bill.js";
import type { Queryable } from "../db/transaction.js";
import type { UsageBreakdown } from "../usage/types.js";
import { toIso } from "../users/records.js";

/** Whose usage: one user's, one key's, or (`{}`) every request of the platform. */
export type UsageScope =
  | { userId: string }
  | { keyHash: string }
  | { teamId: string }
  | Record<string, never>;

/** Filters of {@link querySpendLogs}; times epoch ms, `endTime` exclusive. */
export interface SpendLogFilter {
  keyHash?: string | undefined;
  userId?: string | undefined;
  /** The team of the key that made the call (`team_id` of the row). */
  teamId?: string | undefined;
  startTime?: number | undefined;
  endTime?: number | undefined;
  limit: number;
}

const LOG_COLUMNS = `request_id, api_key, key_alias, user_id, model_group, model, deployment_id, prompt_tokens,
  completion_tokens, total_tokens, spend, start_time, end_time, status, stream, call_type, usage_details, team_id, cache_hit,
  cache_key, cache_saved_spend, reason`;

type LogRow = {
  request_id: string;
  api_key: string | null;
  key_alias: string | null;
  user_id: string | null;
  model_group: string;
  model: string;
  deployment_id: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  spend: number;
  start_time: Date;
  end_time: Date;
  status: number;
  stream: boolean;
  call_type: string;
  usage_details: UsageBreakdown | null;
  team_id: string | null;
  reason: string | null;
  cache_hit: boolean;
  cache_key: string | null;
  cache_saved_spend: number;
};

/**
 * A spend log row on the wire: LiteLLM's `LiteLLM_SpendLogs` names (`startTime`, `user`, …) plus ours; `reason`:
 * why a failed or refused call failed (`budget_exceeded`, `rate_limit_error`, `guardrail_violation`, …), null
 * for an answered one.
 */
function presentLog(row: LogRow) {
  return {
    request_id: row.request_id,
    api_key: row.api_key,
    key_alias: row.key_alias,
    user: row.user_id,
    team_id: row.team_id,
    call_type: row.call_type,
    model_group: row.model_group,
    model: row.model,
    model_id: row.deployment_id,
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    total_tokens: row.total_tokens,
    spend: row.spend,
    startTime: toIso(row.start_time.getTime()),
    endTime: toIso(row.end_time.getTime()),
    status: row.status,
    stream: row.stream,
    usage_details: row.usage_details,
    reason: row.reason,
    cache_hit: row.cache_hit,
    cache_key: row.cache_key,
    cache_saved_spend: row.cache_saved_spend,
  };
}

function whereClause(conditions: Array<[string, unknown]>): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const parts: string[] = [];
  for (const [condition, value] of conditions) {
    if (value === undefined) continue;
    params.push(value);
    parts.push(condition.replace("?", `$${params.length}`));
  }
  return { sql: parts.length === 0 ? "" : `WHERE ${parts.join(" AND ")}`, params };
}

/** Spend log rows, newest first, at most `limit`. */
export async function querySpendLogs(db: Queryable, filter: SpendLogFilter) {
  const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
  const where = whereClause([
    ["api_key = ?", filter.keyHash],
    ["user_id = ?", filter.userId],
    ["team_id = ?", filter.teamId],
    ["start_time >= ?", iso(filter.startTime)],
    ["start_time < ?", iso(filter.endTime)],
  ]);
  const result = await db.query<LogRow>(
    `SELECT ${LOG_COLUMNS} FROM spend_logs ${where.sql} ORDER BY start_time DESC, request_id
     LIMIT $${where.params.length + 1}`,
    [...where.params, filter.limit],
  );
  return result.rows.map(presentLog);
}

const DAY_MS = 86_400_000;
const dayString = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Sums over a set of spend rows: USD, tokens, requests. `cached_tokens`: prompt tokens read from the provider's
 * prompt cache (`usage_details.cache_read`; rows billed from estimates have none); `failed_requests`: rows with
 * an error status (a refusal, the upstream's error, or 499 when the client left), of `requests`;
 * `refused_requests`: of those, the refused ones (a 4xx but 499: budget, rate limit, guardrail, model access);
 * `cache_hits`: rows answered from the gateway's response cache (`cache_hit`, docs/cache.md), of `requests`, and
 * `cache_saved_spend` what those hits would have cost (USD).
 */
type Totals = {
  spend: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  requests: number;
  failed_requests: number;
  refused_requests: number;
  cache_hits: number;
  cache_saved_spend: number;
};
/** The cache reads of a spend row (`s`), tokens, 0 when it has no breakdown. */
const CACHE_READ = `COALESCE((s.usage_details->>'cache_read')::bigint, 0)`;
const SUMS = `COALESCE(sum(s.spend), 0) AS spend, COALESCE(sum(s.prompt_tokens), 0) AS prompt_tokens,
  COALESCE(sum(s.completion_tokens), 0) AS completion_tokens, COALESCE(sum(s.total_tokens), 0) AS total_tokens,
  COALESCE(sum(${CACHE_READ}), 0) AS cached_tokens, count(*) AS requests,
  count(*) FILTER (WHERE s.status >= 400) AS failed_requests,
  count(*) FILTER (WHERE s.status BETWEEN 400 AND 498) AS refused_requests,
  count(*) FILTER (WHERE s.cache_hit) AS cache_hits, COALESCE(sum(s.cache_saved_spend), 0) AS cache_saved_spend`;
const totalsOf = (row: Totals | undefined): Totals => ({
  spend: row?.spend ?? 0,
  prompt_tokens: row?.prompt_tokens ?? 0,
  completion_tokens: row?.completion_tokens ?? 0,
  total_tokens: row?.total_tokens ?? 0,
  cached_tokens: row?.cached_tokens ?? 0,
  requests: row?.requests ?? 0,
  failed_requests: row?.failed_requests ?? 0,
  refused_requests: row?.refused_requests ?? 0,
  cache_hits: row?.cache_hits ?? 0,
  cache_saved_spend: row?.cache_saved_spend ?? 0,
});

/**
 * Usage of one user, one key, one team (its keys' calls) or the platform over `days` UTC days ending with `endDay`
 * (`YYYY-MM-DD`, default today per `now`, epoch ms):
 * totals, one entry per day (days without use are zeros, oldest first), per model alias, per key (with its
 * display name), the 50 most recent requests, and `cache_reads`: the prompt-cache reads per deployment
 * (`model_id`, the spend row's `deployment_id`) and price tier (`long_context`: prompts over 200,000 tokens), so
 * that a reader with the deployments' prices (`/model/info`) can say what caching saved, and `by_reason`: the
 * failed calls per `reason` (null for rows written before reasons were recorded) and whether they count as
 * refused (`refused_requests`), most frequent first.
 */
export async function queryUsage(
  db: Queryable,
  scope: UsageScope,
  days: number,
  now: number,
  endDay?: string,
) {
  const lastDay = endDay === undefined ? Math.floor(now / DAY_MS) * DAY_MS : Date.parse(endDay);
  const firstDay = lastDay - (days - 1) * DAY_MS;
  const [column, value] =
    "userId" in scope
      ? ["s.user_id", scope.userId]
      : "keyHash" in scope
        ? ["s.api_key", scope.keyHash]
        : "teamId" in scope
          ? ["s.team_id", scope.teamId]
          : [];
  // The platform's scope matches every row: `$1 IS NULL` keeps the parameters' numbering.
  const match = column === undefined ? "$1::text IS NULL" : `${column} = $1`;
  const period = "s.start_time >= $2 AND s.start_time < $3";
  const scoped = `FROM spend_logs s WHERE ${match} AND ${period}`;
  const params = [value ?? null, new Date(firstDay).toISOString(), new Date(lastDay + DAY_MS).toISOString()];
  const [totals, daily, byModel, byKey, recent, cacheReads, byReason] = await Promise.all([
    db.query<Totals>(`SELECT ${SUMS} ${scoped}`, params),
    db.query<Totals & { day: string }>(
      `SELECT to_char(s.start_time AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, ${SUMS} ${scoped} GROUP BY day`,
      params,
    ),
    db.query<Totals & { model: string }>(
      `SELECT s.model_group AS model, ${SUMS} ${scoped} GROUP BY s.model_group ORDER BY spend DESC, model`,
      params,
    ),
    db.query<Totals & { api_key: string | null; key_name: string | null; key_alias: string | null }>(
      `SELECT s.api_key, k.key_name, COALESCE(k.key_alias, max(s.key_alias)) AS key_alias, ${SUMS}
       FROM spend_logs s LEFT JOIN keys k ON k.token = s.api_key
       WHERE ${match} AND ${period}
       GROUP BY s.api_key, k.key_name, k.key_alias ORDER BY spend DESC, s.api_key`,
      params,
    ),
    db.query<LogRow>(
      `SELECT ${LOG_COLUMNS} ${scoped} ORDER BY s.start_time DESC, s.request_id LIMIT 50`,
      params,
    ),
    db.query<{ model_id: string | null; long_context: boolean; cached_tokens: number }>(
      `SELECT s.deployment_id AS model_id, s.prompt_tokens > ${LONG_CONTEXT_THRESHOLD} AS long_context,
         sum(${CACHE_READ}) AS cached_tokens
       ${scoped} AND ${CACHE_READ} > 0 GROUP BY model_id, long_context ORDER BY model_id, long_context`,
      params,
    ),
    db.query<{ reason: string | null; refused: boolean; requests: number }>(
      `SELECT s.reason, s.status BETWEEN 400 AND 498 AS refused, count(*) AS requests ${scoped} AND s.status >= 400
       GROUP BY s.reason, refused ORDER BY requests DESC, s.reason, refused`,
      params,
    ),
  ]);
  const perDay = new Map(daily.rows.map((row) => [row.day, totalsOf(row)]));
  return {
    ...("userId" in scope ? { user_id: scope.userId } : "keyHash" in scope ? { api_key: scope.keyHash } : {}),
    days,
    start_date: dayString(firstDay),
    end_date: dayString(lastDay),
    totals: totalsOf(totals.rows[0]),
    daily: Array.from({ length: days }, (_, i) => {
      const date = dayString(firstDay + i * DAY_MS);
      return { date, ...(perDay.get(date) ?? totalsOf(undefined)) };
    }),
    by_model: byModel.rows.map((row) => ({ model: row.model, ...totalsOf(row) })),
    by_key: byKey.rows.map((row) => ({
      api_key: row.api_key,
      key_name: row.key_name,
      key_alias: row.key_alias,
      ...totalsOf(row),
    })),
    recent: recent.rows.map(presentLog),
    cache_reads: cacheReads.rows,
    by_reason: byReason.rows,
  };
}
