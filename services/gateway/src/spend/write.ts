/**
 * Writes one batch of spend rows in one transaction: the log rows, then the spend of every key, user, team and
 * team membership they concern. Idempotent by `request_id`: only rows actually inserted (not already present from an earlier,
 * acknowledged-or-not attempt) add to `keys.spend` / `users.spend`, so a retried batch never counts twice.
 *
 * Locks are taken in one global order (every key row sorted by token, then every user row sorted by user_id, then teams, then memberships)
 * so concurrent flushes from several instances cannot deadlock (LiteLLM's spend writes do, #6895, #27989).
 */
import type pg from "pg";
import { NO_PERIOD_START, updateWithBudgetEvents } from "../budgets/warnings.js";
import { withTransaction } from "../db/transaction.js";
import { memberKey } from "../teams/records.js";
import { currentPeriod } from "../time/budget-period.js";
import type { SpendLogRow } from "./types.js";

// `usage_details` comes as one JSON array for the batch (one JSON.stringify, no per-element escaping), its i-th
// element going to the i-th row; a JSON null becomes SQL NULL.
const INSERT_LOGS_SQL = `INSERT INTO spend_logs (request_id, api_key, key_alias, user_id, model_group, model,
  deployment_id, prompt_tokens, completion_tokens, total_tokens, spend, start_time, end_time, status, stream, call_type,
  usage_details, team_id, cache_hit, cache_key, cache_saved_spend, reason)
SELECT r, k, a, u, g, m, d, pt, ct, tt, s, to_timestamp(st / 1000.0), to_timestamp(et / 1000.0), h, x, c,
  NULLIF($17::jsonb -> (i::int - 1), 'null'::jsonb), tm, ch, ck, cs, rs
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
  $8::int[], $9::int[], $10::int[], $11::numeric[], $12::float8[], $13::float8[], $14::int[], $15::bool[],
  $16::text[], $18::text[], $19::bool[], $20::text[], $21::numeric[], $22::text[])
  WITH ORDINALITY AS l(r, k, a, u, g, m, d, pt, ct, tt, s, st, et, h, x, c, tm, ch, ck, cs, rs, i)
ON CONFLICT (request_id) DO NOTHING
RETURNING request_id`;

/** The tables that carry spend, with their id column. */
const SPEND_TABLES = {
  keys: "token",
  users: "user_id",
  teams: "team_id",
  team_memberships: "member_key",
} as const;

type SpendTable = keyof typeof SPEND_TABLES;

const count = (n: number) => (Number.isFinite(n) && n > 0 ? Math.min(Math.round(n), 2_147_483_647) : 0);
const text = (value: string | null | undefined) =>
  value === undefined || value === null ? null : String(value);

/**
 * A Postgres array literal of numbers (`{1,2.5,0}`), sent as one text parameter: node-postgres would quote and
 * escape every element of a JS array (two regex replaces per number), the biggest share of a batch's serialising
 * time. Every value is a finite number here (the columns below sanitise them), whose `String()` form
 * (`12`, `0.000123`, `1.2e-7`) Postgres reads as int, numeric or float8 alike.
 */
function numberArray(values: readonly number[]): string {
  return `{${values.join(",")}}`;
}

/**
 * The batch as one parameter per column (text columns as arrays for node-postgres to escape, number and boolean
 * columns as array literals, times as epoch ms that the statement turns into timestamptz), sanitised so that a
 * malformed row (NaN tokens, a bad time) cannot make the whole batch fail forever.
 */
function logColumns(rows: SpendLogRow[], now: number): unknown[] {
  const column = <T>(pick: (row: SpendLogRow) => T) => rows.map(pick);
  const numbers = (pick: (row: SpendLogRow) => number) => numberArray(rows.map(pick));
  const epochMs = (ms: number) => (Number.isFinite(ms) ? ms : now);
  return [
    column((r) => String(r.requestId)),
    column((r) => text(r.keyHash)),
    column((r) => text(r.keyAlias)),
    column((r) => text(r.userId)),
    column((r) => text(r.modelGroup) ?? ""),
    column((r) => text(r.model) ?? ""),
    column((r) => text(r.deploymentId)),
    numbers((r) => count(r.promptTokens)),
    numbers((r) => count(r.completionTokens)),
    numbers((r) => count(r.totalTokens)),
    numbers((r) => (Number.isFinite(r.spend) && r.spend > 0 ? r.spend : 0)),
    numbers((r) => epochMs(r.startTime)),
    numbers((r) => epochMs(r.endTime)),
    numbers((r) => (Number.isInteger(r.status) ? r.status : 0)),
    `{${rows.map((r) => (r.stream === true ? "t" : "f")).join(",")}}`,
    column((r) => text(r.callType) ?? "acompletion"),
    JSON.stringify(rows.map((r) => (typeof r.usageDetails === "object" ? r.usageDetails : null))),
    column((r) => text(r.teamId)),
    `{${rows.map((r) => (r.cacheHit === true ? "t" : "f")).join(",")}}`,
    column((r) => text(r.cacheKey)),
    numbers((r) =>
      Number.isFinite(r.cacheSavedSpend) && (r.cacheSavedSpend ?? 0) > 0 ? (r.cacheSavedSpend ?? 0) : 0,
    ),
    column((r) => text(r.reason)),
  ];
}

/**
 * Adds the spend of `rows` to the rows of one table, rolling a due budget period over first (spend 0, next
 * `budget_reset_at`). A log row that ended before the current period started (buffered across a reset, e.g.
 * during an outage) is logged but not added to the new period.
 */
async function addSpend(
  client: pg.PoolClient,
  table: SpendTable,
  rows: SpendLogRow[],
  idOf: (row: SpendLogRow) => string | null,
  now: number,
): Promise<void> {
  const byId = new Map<string, SpendLogRow[]>();
  for (const row of rows) {
    const id = idOf(row);
    if (id === null || !(row.spend > 0)) continue;
    const list = byId.get(id);
    if (list === undefined) byId.set(id, [row]);
    else list.push(row);
  }
  if (byId.size === 0) return;
  const idColumn = SPEND_TABLES[table];
  const ids = [...byId.keys()].sort();
  const locked = await client.query<{
    id: string;
    spend: number;
    budget_duration: string | null;
    budget_reset_at: Date | null;
  }>(
    `SELECT ${idColumn} AS id, spend, budget_duration, budget_reset_at FROM ${table}
     WHERE ${idColumn} = ANY($1::text[]) ORDER BY ${idColumn} FOR UPDATE`,
    [ids],
  );
  const rowIds: string[] = [];
  const amounts: number[] = [];
  const periods = {
    ids: [] as string[],
    rolled: [] as boolean[],
    resets: [] as (string | null)[],
    starts: [] as string[],
  };
  for (const current of locked.rows) {
    const period = currentPeriod(
      {
        spend: current.spend,
        budgetDuration: current.budget_duration,
        budgetResetAt: current.budget_reset_at?.getTime() ?? null,
      },
      now,
    );
    for (const row of byId.get(current.id) ?? []) {
      if (period.periodStart !== null && row.endTime < period.periodStart) continue;
      rowIds.push(current.id);
      amounts.push(row.spend);
    }
    periods.ids.push(current.id);
    periods.rolled.push(period.rolled);
    periods.resets.push(period.budgetResetAt === null ? null : new Date(period.budgetResetAt).toISOString());
    periods.starts.push(
      period.periodStart === null ? NO_PERIOD_START : new Date(period.periodStart).toISOString(),
    );
  }
  if (periods.ids.length === 0) return;
  // Amounts are summed as numeric in the database, exactly (a JS sum of 0.1 + 0.2 would not be).
  // The same statement records the 80 % and 100 % budget events (budgets/warnings.ts).
  const update = `UPDATE ${table} AS t
     SET spend = CASE WHEN p.rolled THEN 0 ELSE t.spend END + COALESCE(d.delta, 0),
         budget_reset_at = CASE WHEN p.rolled THEN p.reset_at ELSE t.budget_reset_at END
     FROM p LEFT JOIN d ON d.id = p.id
     WHERE t.${idColumn} = p.id`;
  // Budget events (webhooks) are recorded for keys, users and teams; a member's budget in a team records none.
  const events = table !== "team_memberships";
  const statement = events ? updateWithBudgetEvents(table, update) : update;
  await client.query(
    `WITH d AS (SELECT id, sum(amount) AS delta FROM unnest($1::text[], $2::numeric[]) AS x(id, amount) GROUP BY id),
          p AS (SELECT * FROM unnest($3::text[], $4::bool[], $5::timestamptz[], $6::timestamptz[])
                AS y(id, rolled, reset_at, period_start))${events ? "," : ""}
     ${statement}`,
    [rowIds, amounts, periods.ids, periods.rolled, periods.resets, periods.starts],
  );
}

/** The membership a row's spend counts against: its team key's user in that team, or null. */
const memberOf = (row: SpendLogRow) =>
  row.teamId == null || row.userId == null ? null : memberKey(row.teamId, row.userId);

/**
 * Writes a batch in one transaction.
 * @param now clock time (epoch ms) used to roll budget periods over.
 * @returns how many log rows were new (the rest were already written).
 * @throws the database error; the transaction is rolled back and the batch can be retried as a whole.
 */
export async function writeSpendBatch(pool: pg.Pool, rows: SpendLogRow[], now: number): Promise<number> {
  return withTransaction(pool, async (client) => {
    const inserted = await client.query<{ request_id: string }>(INSERT_LOGS_SQL, logColumns(rows, now));
    const fresh = new Set(inserted.rows.map((r) => r.request_id));
    // One row per request id even if the batch carried a duplicate.
    const seen = new Set<string>();
    const newRows = rows.filter(
      (r) => fresh.has(r.requestId) && !seen.has(r.requestId) && seen.add(r.requestId),
    );
    await addSpend(client, "keys", newRows, (r) => r.keyHash, now);
    // A team key's spend counts against its team and its member's budget in the team, not the user's own.
    await addSpend(client, "users", newRows, (r) => (r.teamId == null ? r.userId : null), now);
    await addSpend(client, "teams", newRows, (r) => r.teamId ?? null, now);
    await addSpend(client, "team_memberships", newRows, memberOf, now);
    return newRows.length;
  });
}
