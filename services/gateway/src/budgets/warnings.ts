/**
 * Budget warnings: which events exist and how the spend writer records them. An event row in `budget_events`
 * (migration 2) is both the mark that the event happened in this budget period and the webhook outbox entry;
 * its primary key (scope, scope_id, period_start, threshold) and `ON CONFLICT DO NOTHING` make it exactly once
 * across gateway instances and concurrent writers.
 *
 * Both events are recorded here, in the same transaction that books settled spend (see `spend/write.ts`):
 * - `threshold: 0.8` (`budget_threshold_reached`) when settled spend reaches 80 % of `max_budget`;
 * - `threshold: 1` (`budget_exceeded`) when settled spend reaches `max_budget`: the state in which the admitters
 *   refuse every call on settled spend alone (`limits/rules.ts` `budgetError`, "the budget is used up"), not
 *   because of reservations of calls in flight.
 *
 * Why the spend writer and not the refusal: the writer already holds the key's and user's row locks, so the mark
 * is atomic with the spend that causes it (a crash loses neither, a restart finds the row), costs the request
 * path nothing (a refusal would need a queue and a database round trip of its own, on the path a client
 * hammering a spent key takes most), and is exactly once across instances by the table's primary key. The
 * admitters' counters start from, and settle into, the same spend, so "settled spend ≥ budget" in the database
 * is what makes them refuse every call with "the budget is used up". What this misses: a budget lowered below
 * the spend already booked, with no further spend (no write, so no event).
 */

/** Fraction of `max_budget` (USD) whose crossing by settled spend records a warning. */
export const WARNING_THRESHOLD = 0.8;

/** Fraction of `max_budget` (USD) whose reaching by settled spend records `budget_exceeded`. */
export const EXCEEDED_THRESHOLD = 1;

/** The recorded events: threshold (fraction of `max_budget`) and `event` name, in the order they are crossed. */
export const BUDGET_EVENTS = [
  { threshold: WARNING_THRESHOLD, event: "budget_threshold_reached" },
  { threshold: EXCEEDED_THRESHOLD, event: "budget_exceeded" },
] as const;

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

/** `VALUES` rows of {@link BUDGET_EVENTS} (constants only: nothing from a client). */
const EVENT_ROWS = BUDGET_EVENTS.map((e) => `(${e.threshold}::numeric, '${e.event}'::text)`).join(", ");

/**
 * The end of a `WITH d AS (…), p AS (…), ` statement (p: id, period_start; d: id, delta) that runs the spend
 * writer's `UPDATE ${table} AS t … FROM p LEFT JOIN d` and, in the same statement, records every
 * {@link BUDGET_EVENTS} threshold that settled spend is now at or over, for rows of a positive `max_budget`
 * after an increment (one batch crossing both records both). `update` must end without RETURNING.
 */
export function updateWithBudgetEvents(table: keyof typeof PAYLOAD_COLUMNS, update: string): string {
  const c = PAYLOAD_COLUMNS[table];
  return `u AS (${update}
  RETURNING '${c.scope}'::text AS scope, p.id, p.period_start, t.max_budget, t.spend, t.budget_reset_at,
    COALESCE(d.delta, 0) AS delta, ${c.user} AS user_id, ${c.keyAlias} AS key_alias)
INSERT INTO budget_events (scope, scope_id, period_start, threshold, payload)
SELECT u.scope, u.id, u.period_start, x.threshold,
  jsonb_build_object('event', x.event, 'threshold', x.threshold, 'scope', u.scope,
    'user', u.user_id, 'key_alias', u.key_alias, 'budget', u.max_budget::text, 'spend', u.spend::text,
    'period_end', to_char(u.budget_reset_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
FROM u CROSS JOIN (VALUES ${EVENT_ROWS}) AS x(threshold, event)
WHERE u.max_budget > 0 AND u.delta > 0 AND u.spend >= u.max_budget * x.threshold
ON CONFLICT DO NOTHING`;
}
