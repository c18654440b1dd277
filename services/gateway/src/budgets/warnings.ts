/**
 * Budget warnings: which events exist and how the spend writer records them. An event row in `budget_events`
 * (migration 2) is both the mark that the event happened in this budget period and the webhook outbox entry;
 * its primary key (scope, scope_id, period_start, threshold) and `ON CONFLICT DO NOTHING` make it exactly once
 * across gateway instances and concurrent writers.
 *
 * `threshold: 0.8` is recorded here, in the same transaction that books settled spend (see `spend/write.ts`),
 * so it is never on the request path and never lost between the spend update and the mark.
 */

/** Fraction of `max_budget` (USD) whose crossing by settled spend records a warning. */
export const WARNING_THRESHOLD = 0.8;

/** Budget holders whose spend the spend writer books; `team` is reserved in the table for team budgets. */
export type BudgetScope = "key" | "user" | "team";

/**
 * Stored JSON of one event (the webhook body minus `text`, which the sender adds).
 * Money in USD as decimal strings (exact `numeric`); `period_end` ISO 8601 or null for a budget without
 * `budget_duration`.
 */
export interface BudgetEventPayload {
  event: "budget_threshold_reached" | "budget_exceeded";
  threshold: number;
  scope: BudgetScope;
  user: string | null;
  key_alias: string | null;
  budget: string;
  spend: string;
  period_end: string | null;
}

/** Columns each spend table contributes to the payload (users have no key alias). */
const PAYLOAD_COLUMNS = {
  keys: { scope: "key", user: "t.user_id", keyAlias: "t.key_alias" },
  users: { scope: "user", user: "t.user_id", keyAlias: "NULL::text" },
} as const;

/** Period start stored for a budget without `budget_duration` (one period, forever). */
export const NO_PERIOD_START = new Date(0).toISOString();

/**
 * The end of a `WITH d AS (…), p AS (…), ` statement (p: id, period_start; d: id, delta) that runs the spend
 * writer's `UPDATE ${table} AS t … FROM p LEFT JOIN d` and, in the same statement, records a {@link WARNING_THRESHOLD} event for every row whose settled spend is now at or over
 * 80 % of a positive `max_budget` after an increment. `update` must end without RETURNING.
 */
export function updateWithWarningEvents(table: keyof typeof PAYLOAD_COLUMNS, update: string): string {
  const c = PAYLOAD_COLUMNS[table];
  return `u AS (${update}
  RETURNING '${c.scope}'::text AS scope, p.id, p.period_start, t.max_budget, t.spend, t.budget_reset_at,
    COALESCE(d.delta, 0) AS delta, ${c.user} AS user_id, ${c.keyAlias} AS key_alias)
INSERT INTO budget_events (scope, scope_id, period_start, threshold, payload)
SELECT u.scope, u.id, u.period_start, ${WARNING_THRESHOLD},
  jsonb_build_object('event', 'budget_threshold_reached', 'threshold', ${WARNING_THRESHOLD}, 'scope', u.scope,
    'user', u.user_id, 'key_alias', u.key_alias, 'budget', u.max_budget::text, 'spend', u.spend::text,
    'period_end', to_char(u.budget_reset_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
FROM u
WHERE u.max_budget > 0 AND u.delta > 0 AND u.spend >= u.max_budget * ${WARNING_THRESHOLD}
ON CONFLICT DO NOTHING`;
}
