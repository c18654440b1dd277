/**
 * Puts the budgets a finished call was booked on into LiteLLM's budget gauges (`budgetGauges` of `metrics.ts`):
 * per key, user and team its budget, what is left of it and the hours until its reset (LiteLLM has none for a
 * member's budget in a team). A subject's series is made once per label set; a call's series remembers the ones
 * its subjects used last time (`lastBudgets`), so the usual call finds them without building a key. No I/O.
 */
import type { LimitSubject } from "../limits/types.js";
import type { CompactGauge } from "./compact-gauge.js";
import type { CallerLabels, GatewayMetrics } from "./metrics.js";
import { seriesKey } from "./series-store.js";

const MS_PER_HOUR = 3_600_000;
/** Subjects of a call whose budget series a call's series remembers (a call has a key's and a user's). */
export const MAX_LAST_BUDGETS = 4;

/** The series of one key (with an alias), user, or team (with an alias) in its scope's three budget gauges. */
export interface BudgetSeries {
  scope: LimitSubject["scope"];
  id: string;
  alias: string;
  /** The scope's gauges, and the series' slot in them (they share their slots: `budgetGauges` of metrics.ts). */
  gauges: BudgetGauges;
  slot: number;
}

/** What of a finished call its budgets' gauges read. Money in USD, times in epoch ms. */
export interface BudgetFacts {
  /** The caller's labels: its key's hash and alias name the key's series. */
  caller: CallerLabels;
  /** Budgets the call was booked on (the key's, then its user's, …); empty for the master key. */
  subjects: readonly LimitSubject[];
  /** Cost of this call, USD (not yet in the subjects' `spend`). */
  cost: number;
  /** Wall clock at the end of the call, epoch ms (budget reset countdowns). */
  nowEpochMs: number;
}

type BudgetScope = Exclude<LimitSubject["scope"], "team_member">;
/** A scope's budget gauges: its budget, what is left of it, hours until its reset. */
type BudgetGauges = readonly [max: CompactGauge, remaining: CompactGauge, hours: CompactGauge];
/** A subject with budget gauges (not a team member's). */
type BudgetSubject = LimitSubject & { scope: BudgetScope };

/** Per scope LiteLLM has budget gauges for: those gauges, and the labels of a subject's series in them. */
const BUDGET_SCOPES: Record<
  BudgetScope,
  {
    gauges: (m: GatewayMetrics) => BudgetGauges;
    labels: (id: string, alias: string) => Record<string, string>;
  }
> = {
  key: {
    gauges: (m) => [m.apiKeyMaxBudget, m.remainingApiKeyBudget, m.apiKeyBudgetRemainingHours],
    labels: (id, alias) => ({ hashed_api_key: id, api_key_alias: alias }),
  },
  user: {
    gauges: (m) => [m.userMaxBudget, m.remainingUserBudget, m.userBudgetRemainingHours],
    labels: (id) => ({ user: id }),
  },
  team: {
    gauges: (m) => [m.teamMaxBudget, m.remainingTeamBudget, m.teamBudgetRemainingHours],
    labels: (id, alias) => ({ team: id, team_alias: alias }),
  },
};

/** Per metrics, per scope: the budget series by subject (`seriesKey` of id and alias; a user's id alone). */
const caches = new WeakMap<GatewayMetrics, Record<BudgetScope, Map<string, BudgetSeries>>>();

function cacheOf(metrics: GatewayMetrics, scope: BudgetScope): Map<string, BudgetSeries> {
  let found = caches.get(metrics);
  if (found === undefined) {
    found = { key: new Map(), user: new Map(), team: new Map() };
    caches.set(metrics, found);
  }
  return found[scope];
}

/**
 * Sets the budget gauges of each of the call's subjects but team members', as LiteLLM: remaining = max budget −
 * (the subject's spend as read with the key + this call's cost); `+Inf` for a subject without a budget; reset
 * hours only for budgets with a period.
 * @param lastBudgets the call's series' memory of its subjects' budget series, updated here.
 */
export function recordBudgets(
  metrics: GatewayMetrics,
  lastBudgets: BudgetSeries[],
  facts: BudgetFacts,
): void {
  const { subjects } = facts;
  for (let i = 0; i < subjects.length; i++) {
    const subject = subjects[i] as LimitSubject;
    if (subject.scope !== "team_member")
      recordBudget(metrics, lastBudgets, i, subject as BudgetSubject, facts);
  }
}

/** The budget series of `subject` (its `index`-th of the call), made once per label set. */
function budgetSeriesOf(
  metrics: GatewayMetrics,
  lastBudgets: BudgetSeries[],
  index: number,
  subject: BudgetSubject,
  callerAlias: string,
  callerKey: string,
): BudgetSeries {
  const { scope, id } = subject;
  const alias = scope === "user" ? "" : id === callerKey ? callerAlias : (subject.alias ?? "");
  const last = lastBudgets[index];
  if (last !== undefined && last.scope === scope && last.id === id && last.alias === alias) return last;
  const cache = cacheOf(metrics, scope);
  const key = scope === "user" ? id : seriesKey([id, alias]);
  let series = cache.get(key);
  if (series === undefined) {
    const { gauges, labels } = BUDGET_SCOPES[scope];
    const scopeGauges = gauges(metrics);
    series = { scope, id, alias, gauges: scopeGauges, slot: scopeGauges[0].series(labels(id, alias)) };
    cache.set(key, series);
  }
  if (index < MAX_LAST_BUDGETS) lastBudgets[index] = series;
  return series;
}

function recordBudget(
  metrics: GatewayMetrics,
  lastBudgets: BudgetSeries[],
  index: number,
  subject: BudgetSubject,
  facts: BudgetFacts,
): void {
  const max = subject.maxBudget ?? Number.POSITIVE_INFINITY;
  const remaining = max - (subject.spend + facts.cost);
  const { hashed_api_key, api_key_alias } = facts.caller;
  const { gauges, slot } = budgetSeriesOf(
    metrics,
    lastBudgets,
    index,
    subject,
    api_key_alias,
    hashed_api_key,
  );
  gauges[0].setSeries(slot, max);
  gauges[1].setSeries(slot, remaining);
  if (subject.budgetResetAt !== null) {
    gauges[2].setSeries(slot, Math.max(0, subject.budgetResetAt - facts.nowEpochMs) / MS_PER_HOUR);
  }
}
