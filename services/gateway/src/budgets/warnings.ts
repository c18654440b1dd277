/**
 * Budget warnings: which events exist and how the spend writer records them. An event row in `budget_events`
 * (migration 2) is both the mark that the event happened in this budget period and the webhook outbox entry;
 * its primary key (scope, scope_id, period_start, threshold) and `ON CONFLICT DO NOTHING` make it exactly once
 * across gateway instances and concurrent writers.
 *
 * Recorded for keys, users and teams. Recorded here, in the same transaction that books settled spend (see
 * `spend/write.ts`):
 * - `threshold: 0.8` (`budget_threshold_reached`) when settled spend reaches 80 % of `max_budget`;
 * - `threshold: 1` (`budget_exceeded`) when settled spend reaches `max_budget`.
 *
 * Because calls reserve their worst case, settled spend usually stops a little short of 100 %: the budget is
 * exhausted when a call is refused by settled spend alone (its estimate does not fit beside the spend, whatever
 * calls in flight reserve). That refusal records the same `threshold: 1` event (`exhausted.ts`), off the request
 * path; the primary key makes whichever comes first the only one. The spend writer's mark is atomic with the
 * spend that causes it (a crash loses neither, a restart finds the row).
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

/**
 * Budget holders whose events are recorded: keys, users and teams (LiteLLM's `event_group`). A member's budget in
 * a team (`max_budget_in_team`) records none (LiteLLM has no event for it either).
 */
export type BudgetScope = "key" | "user" | "team";

/**
 * Stored JSON of one event (the webhook body minus `text`, which the sender adds).
 * Money in USD as decimal strings (exact `numeric`); `period_end` ISO 8601 or null for a budget without
 * `budget_duration`. `event_group` is LiteLLM's name of the budget holder's kind in its budget webhooks
 * (docs.litellm.ai/docs/proxy/alerting, `WebhookEvent`), equal to `scope`; `team_id`/`team_alias` name a team
 * budget's team, or a team key's team (null otherwise).
 */
export interface BudgetEventPayload {
  event: "budget_threshold_reached" | "budget_exceeded";
  threshold: number;
  scope: BudgetScope;
  event_group: BudgetScope;
  user: string | null;
  key_alias: string | null;
  team_id: string | null;
  team_alias: string | null;
  budget: string;
  spend: string;
  period_end: string | null;
}

/** The alias of the team `t.team_id` (a key's or a team's row `t`), as an SQL expression. */
const TEAM_ALIAS_OF_T = "(SELECT a.team_alias FROM teams AS a WHERE a.team_id = t.team_id)";

/**
 * Columns each spend table contributes to the payload (users have no key alias, teams no user and no key), and
 * its id column (SQL expressions over the table's row `t`; constants and column names only).
 */
export const PAYLOAD_COLUMNS = {
  keys: {
    scope: "key",
    user: "t.user_id",
    keyAlias: "t.key_alias",
    teamId: "t.team_id",
    teamAlias: TEAM_ALIAS_OF_T,
    id: "token",
  },
  users: {
    scope: "user",
    user: "t.user_id",
    keyAlias: "NULL::text",
    teamId: "NULL::text",
    teamAlias: "NULL::text",
    id: "user_id",
  },
  teams: {
    scope: "team",
    user: "NULL::text",
    keyAlias: "NULL::text",
    teamId: "t.team_id",
    teamAlias: "t.team_alias",
    id: "team_id",
  },
} as const;

/** The spend tables whose budgets record events. */
export type EventTable = keyof typeof PAYLOAD_COLUMNS;

/** Period start stored for a budget without `budget_duration` (one period, forever). */
export const NO_PERIOD_START = new Date(0).toISOString();

/** `VALUES` rows of {@link BUDGET_EVENTS} (constants only: nothing from a client). */
const EVENT_ROWS = BUDGET_EVENTS.map((e) => `(${e.threshold}::numeric, '${e.event}'::text)`).join(", ");

/**
 * The stored payload ({@link BudgetEventPayload}) as an SQL expression over a row alias `r` with columns
 * `scope`, `user_id`, `key_alias`, `team_id`, `team_alias`, `max_budget`, `spend`, `budget_reset_at`, for the
 * event `event` at `threshold` (SQL expressions; constants and column names only, nothing from a client).
 */
export function payloadSql(r: string, event: string, threshold: string): string {
  return `jsonb_build_object('event', ${event}, 'threshold', ${threshold}, 'scope', ${r}.scope,
    'event_group', ${r}.scope, 'user', ${r}.user_id, 'key_alias', ${r}.key_alias,
    'team_id', ${r}.team_id, 'team_alias', ${r}.team_alias, 'budget', ${r}.max_budget::text, 'spend', ${r}.spend::text,
    'period_end', to_char(${r}.budget_reset_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))`;
}

/**
 * The end of a `WITH d AS (…), p AS (…), ` statement (p: id, period_start; d: id, delta) that runs the spend
 * writer's `UPDATE ${table} AS t … FROM p LEFT JOIN d` and, in the same statement, records every
 * {@link BUDGET_EVENTS} threshold that settled spend is now at or over, for rows of a positive `max_budget`
 * after an increment (one batch crossing both records both). `update` must end without RETURNING.
 */
export function updateWithBudgetEvents(table: EventTable, update: string): string {
  const c = PAYLOAD_COLUMNS[table];
  return `u AS (${update}
  RETURNING '${c.scope}'::text AS scope, p.id, p.period_start, t.max_budget, t.spend, t.budget_reset_at,
    COALESCE(d.delta, 0) AS delta, ${c.user} AS user_id, ${c.keyAlias} AS key_alias,
    ${c.teamId} AS team_id, ${c.teamAlias} AS team_alias)
INSERT INTO budget_events (scope, scope_id, period_start, threshold, payload)
SELECT u.scope, u.id, u.period_start, x.threshold, ${payloadSql("u", "x.event", "x.threshold")}
FROM u CROSS JOIN (VALUES ${EVENT_ROWS}) AS x(threshold, event)
WHERE u.max_budget > 0 AND u.delta > 0 AND u.spend >= u.max_budget * x.threshold
ON CONFLICT DO NOTHING`;
}
