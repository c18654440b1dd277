/**
 * The `budget_exceeded` event (`threshold: 1`) of a budget a call was refused on by settled spend alone: the
 * call's estimate does not fit beside the spend, whatever calls in flight reserve ({@link BudgetRefusal}). Calls
 * reserve their worst case, so settled spend usually stops a little short of 100 %; this refusal is when the
 * budget stops serving calls, and the event says so.
 *
 * Off the request path: {@link withExhaustedBudgets} wraps the {@link Admitter} and notes the refused budget in a
 * set (no I/O); {@link ExhaustedBudgets} writes the noted budgets every `intervalMs` as `budget_events` rows,
 * with the key's, user's or team's current spend, `ON CONFLICT DO NOTHING` on the table's primary key (scope, id,
 * period start, threshold): one event per budget per period across instances, also against the spend writer's
 * own `threshold: 1` row (`warnings.ts`). A row is durable once written; the sender (`sender.ts`) delivers it.
 */
import type { FastifyBaseLogger } from "fastify";
import type pg from "pg";
import { BudgetRefusal } from "../limits/rules.js";
import type { Admitter, LimitSubject } from "../limits/types.js";
import { currentPeriod } from "../time/budget-period.js";
import {
  type EventTable,
  EXCEEDED_THRESHOLD,
  NO_PERIOD_START,
  PAYLOAD_COLUMNS,
  payloadSql,
} from "./warnings.js";

/** At most this many budgets wait for the next write (a flood of refusals cannot grow memory). */
const MAX_PENDING = 10_000;

/**
 * The statement for one table: $1 ids, $2 period starts (ISO 8601), $3 the spend the admitter counted (USD), one
 * row per noted budget. The payload's spend is the larger of that and the row's (spend rows are booked in
 * batches, so the row may lag the admitter).
 */
function insertSql(table: EventTable): string {
  const c = PAYLOAD_COLUMNS[table];
  return `INSERT INTO budget_events (scope, scope_id, period_start, threshold, payload)
SELECT r.scope, r.id, r.period_start, ${EXCEEDED_THRESHOLD}, ${payloadSql("r", "'budget_exceeded'", String(EXCEEDED_THRESHOLD))}
FROM (SELECT '${c.scope}'::text AS scope, n.id, n.period_start, t.max_budget,
        GREATEST(t.spend, n.spent) AS spend, t.budget_reset_at, ${c.user} AS user_id, ${c.keyAlias} AS key_alias,
        ${c.teamId} AS team_id, ${c.teamAlias} AS team_alias
      FROM unnest($1::text[], $2::timestamptz[], $3::numeric[]) AS n(id, period_start, spent)
      JOIN ${table} AS t ON t.${c.id} = n.id
      WHERE t.max_budget > 0) AS r
ON CONFLICT DO NOTHING`;
}

/** The scopes whose refusals record an event (a member's budget in a team records none), and their statement. */
const INSERT = { key: insertSql("keys"), user: insertSql("users"), team: insertSql("teams") } as const;
type EventScope = keyof typeof INSERT;
const EVENT_SCOPES = Object.keys(INSERT) as EventScope[];

const recordsEvents = (scope: LimitSubject["scope"]): scope is EventScope => scope in INSERT;

/** Budgets refused by settled spend, written to `budget_events` in the background. */
export class ExhaustedBudgets {
  /** `scope id period-start` → the budget, until written. */
  private pending = new Map<string, { scope: EventScope; id: string; periodStart: string; spent: number }>();
  /** Keys written this process (a spent key keeps being refused: each period's event is written once here). */
  private readonly written = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param pool the gateway's database.
   * @param now wall clock, epoch ms (the budget period of a refusal).
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly now: () => number,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Notes that `subject`'s budget refused a call by settled spend alone (`spent`: USD counted then). No I/O. */
  note(subject: LimitSubject, spent: number): void {
    const { scope } = subject;
    if (!recordsEvents(scope)) return;
    const period = currentPeriod(subject, this.now());
    const periodStart =
      period.periodStart === null ? NO_PERIOD_START : new Date(period.periodStart).toISOString();
    const key = `${scope} ${subject.id} ${periodStart}`;
    if (this.written.has(key) || this.pending.has(key) || this.pending.size >= MAX_PENDING) return;
    this.pending.set(key, { scope, id: subject.id, periodStart, spent });
  }

  /**
   * Writes every noted budget (one statement per scope).
   * @throws the database error; the budgets stay noted for the next write.
   */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      for (const scope of EVENT_SCOPES) {
        const rows = [...batch.values()].filter((b) => b.scope === scope);
        if (rows.length === 0) continue;
        await this.pool.query(INSERT[scope], [
          rows.map((r) => r.id),
          rows.map((r) => r.periodStart),
          rows.map((r) => r.spent),
        ]);
      }
      for (const key of batch.keys()) this.written.add(key);
      if (this.written.size > MAX_PENDING) this.written.clear();
    } catch (error) {
      for (const [key, value] of batch) if (this.pending.size < MAX_PENDING) this.pending.set(key, value);
      throw error;
    }
  }

  /** Writes every `intervalMs` (default 1000 ms) until the returned stop is called (which writes once more). */
  start(intervalMs = 1000): () => Promise<void> {
    const tick = () =>
      this.flush().catch((error: unknown) =>
        this.log.warn({ err: error }, "could not record budget_exceeded events; retrying"),
      );
    this.timer = setInterval(tick, intervalMs);
    this.timer.unref();
    return async () => {
      clearInterval(this.timer);
      await tick();
    };
  }
}

/**
 * `admitter`, noting in `budgets` every budget that refuses a call by settled spend alone (the refusal is
 * thrown on unchanged).
 */
export function withExhaustedBudgets(admitter: Admitter, budgets: ExhaustedBudgets): Admitter {
  return {
    async admit(request) {
      try {
        return await admitter.admit(request);
      } catch (error) {
        if (error instanceof BudgetRefusal && error.bySettledSpend) budgets.note(error.subject, error.spent);
        throw error;
      }
    },
  };
}
