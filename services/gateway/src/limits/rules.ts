/**
 * The limit rules shared by the Redis and the in-process admitters: windows, units, reservation lifetime,
 * which subjects need checking, and the refusals (OpenAI-shaped {@link GatewayError}s).
 *
 * - rpm / tpm: fixed 60 s windows aligned on the epoch minute of the injected clock (`floor(now / 60000)`).
 *   A request is admitted while the window's count is below the limit (rpm counts admitted requests; tpm counts
 *   tokens settled in the window, so it refuses new calls once the window's tokens reach the limit).
 * - Budgets: integer micro-USD (1 USD = 1,000,000) so that repeated increments never drift; a call is admitted
 *   when `spent < max` and `spent + reserved + estimate <= max`, then its estimate is reserved until settled,
 *   released, or reclaimed after {@link RESERVATION_TTL_MS}.
 */
import { GatewayError } from "../errors/gateway-error.js";
import type { Admission, Extension, LimitSubject, SettledUsage } from "./types.js";

/** Length of a rate-limit window, ms. */
export const WINDOW_MS = 60_000;
/** A reservation not settled or released within this many ms (a crashed request) is reclaimed. */
export const RESERVATION_TTL_MS = 10 * 60_000;
/** Budget counters outlive the end of their period by this much, ms, for settles of calls in flight at rollover. */
export const PERIOD_GRACE_MS = 60 * 60_000;
/** Lifetime budgets (no period) are cached this long after their last use, ms, then re-seeded from the database. */
export const LIFETIME_COUNTER_TTL_MS = 30 * 24 * 60 * 60_000;

/** USD → integer micro-USD (rounded; negative and non-finite amounts count as 0). */
export function toMicros(usd: number): number {
  return Number.isFinite(usd) && usd > 0 ? Math.round(usd * 1_000_000) : 0;
}

/** A subject that has at least one limit, with its limits in the units the counters use. */
export interface SubjectPlan {
  subject: LimitSubject;
  /** `<scope>:<id>`: the counters' identity. */
  counterId: string;
  /** Requests per window, or -1 for none. */
  rpm: number;
  /** Tokens per window, or -1 for none. */
  tpm: number;
  /** Budget in micro-USD, or -1 for none. */
  maxMicros: number;
  /** Calls in flight at once (`max_parallel_requests`), or -1 for none (`parallel.ts`). */
  parallel: number;
  /** The database's spend for the period, micro-USD: the counter's floor. */
  seedMicros: number;
  /** The budget period's identity: its end (epoch ms) or `lifetime`. */
  period: string;
}

const limitOrNone = (limit: number | null): number => (limit === null ? -1 : Math.max(0, Math.floor(limit)));

/** The subjects that carry any limit (unlimited subjects and the master key's empty list skip every counter). */
export function planSubjects(subjects: readonly LimitSubject[]): SubjectPlan[] {
  const plans: SubjectPlan[] = [];
  for (const subject of subjects) {
    const parallel = subject.maxParallelRequests ?? null;
    if (
      subject.rpmLimit === null &&
      subject.tpmLimit === null &&
      subject.maxBudget === null &&
      parallel === null
    )
      continue;
    plans.push({
      subject,
      counterId: `${subject.scope}:${subject.id}`,
      rpm: limitOrNone(subject.rpmLimit),
      tpm: limitOrNone(subject.tpmLimit),
      maxMicros: subject.maxBudget === null ? -1 : toMicros(subject.maxBudget),
      parallel: limitOrNone(parallel),
      seedMicros: toMicros(subject.spend),
      period: subject.budgetResetAt === null ? "lifetime" : String(subject.budgetResetAt),
    });
  }
  return plans;
}

/** Whether the plan has a limit counted per window or period (rpm, tpm, budget), not only a parallel one. */
export const counted = (plan: SubjectPlan): boolean => plan.rpm >= 0 || plan.tpm >= 0 || plan.maxMicros >= 0;

/** Index of the fixed window containing `now` (epoch ms). */
export function windowIndex(now: number): number {
  return Math.floor(now / WINDOW_MS);
}

/** How long a budget counter must live from `now`, ms: until the period ends plus grace, or the lifetime TTL. */
export function budgetCounterTtlMs(subject: LimitSubject, now: number): number {
  if (subject.budgetResetAt === null) return LIFETIME_COUNTER_TTL_MS;
  return Math.max(0, subject.budgetResetAt - now) + PERIOD_GRACE_MS;
}

/** `$1.00`, `$0.000125`: cents when exact, else up to six decimals. */
export function formatUsd(micros: number): string {
  const usd = micros / 1_000_000;
  if (micros % 10_000 === 0) return `$${usd.toFixed(2)}`;
  return `$${usd.toFixed(6).replace(/0+$/, "")}`;
}

/** ISO 8601 UTC without zero milliseconds: `2026-12-01T00:00:00Z`. */
export function formatInstant(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(".000Z", "Z");
}

/**
 * `key "alias"`, `key 1a2b3c4d…` (hash prefix when there is no alias), `user "alice"`, `team "ml"` or
 * `team member "alice"`. Never the key itself.
 */
export function describeSubject(subject: LimitSubject): string {
  if (subject.scope === "user") return `user "${subject.alias ?? subject.id}"`;
  if (subject.scope === "team") return `team "${subject.alias ?? subject.id}"`;
  if (subject.scope === "team_member") return `team member "${subject.alias ?? subject.id}"`;
  return subject.alias ? `key "${subject.alias}"` : `key ${subject.id.slice(0, 8)}…`;
}

/**
 * 429 `rate_limit_error` (LiteLLM answers rpm/tpm limits with 429 and `retry-after`), e.g. `Rate limit exceeded:
 * key "ci" allows 10 requests per minute (rpm_limit); 10 were used in this window. Retry after 37 seconds.`
 * `retry-after` is the whole seconds until the window ends (at least 1).
 */
export function rateLimitError(
  plan: SubjectPlan,
  kind: "rpm" | "tpm",
  used: number,
  now: number,
): GatewayError {
  const retryAfter = Math.max(1, Math.ceil(((windowIndex(now) + 1) * WINDOW_MS - now) / 1000));
  const limit = kind === "rpm" ? plan.rpm : plan.tpm;
  const unit = kind === "rpm" ? "requests" : "tokens";
  const message =
    `Rate limit exceeded: ${describeSubject(plan.subject)} allows ${limit} ${unit} per minute (${kind}_limit); ` +
    `${used} were used in this window. Retry after ${retryAfter} seconds.`;
  return new GatewayError(429, message, {
    type: "rate_limit_error",
    code: "429",
    headers: { "retry-after": String(retryAfter) },
  });
}

/** How a refusal names each budget (LiteLLM's wording: `Key budget`, `User budget`, `Team budget`). */
const OWNER: Record<LimitSubject["scope"], string> = {
  key: "Key",
  user: "User",
  team: "Team",
  team_member: "Team member",
};

/**
 * 429 `budget_exceeded` (LiteLLM's newer builds; older ones answer 400), naming the budget, its amount, the
 * spend and the reset time, then what this call would reserve, e.g. `Budget has been exceeded! Key budget
 * ("ci"): $1.00, spend: $0.40 (+$0.50 reserved by calls in flight), resets at 2026-12-01T00:00:00Z. This call
 * would reserve $0.20 (its prompt estimate plus max_tokens at the model's price); a lower max_tokens lowers
 * that.` When the settled spend alone has reached the budget, the last sentence says no call fits instead.
 * The refusal says whether settled spend alone refused it ({@link BudgetRefusal}); `budgets/exhausted.ts`
 * records the `budget_exceeded` webhook event from that, off the request path.
 *
 * Headers: `x-should-retry: false`, which the official OpenAI SDKs honour before their own retry rule (429 is
 * otherwise retried: openai-node `shouldRetry`, openai-python `_should_retry`); no `retry-after`, or clients
 * that honour it would sleep until the period ends.
 */
export function budgetError(
  plan: SubjectPlan,
  spentMicros: number,
  reservedMicros: number,
  estimateMicros: number,
): BudgetRefusal {
  const { subject } = plan;
  const owner = OWNER[subject.scope];
  const name = describeSubject(subject).replace(/^(key|user|team member|team) /, "");
  const usedUp = spentMicros >= plan.maxMicros;
  let message = `Budget has been exceeded! ${owner} budget (${name}): ${formatUsd(plan.maxMicros)}, spend: ${formatUsd(spentMicros)}`;
  if (!usedUp && reservedMicros > 0)
    message += ` (+${formatUsd(reservedMicros)} reserved by calls in flight)`;
  message +=
    subject.budgetResetAt === null
      ? ", no reset (lifetime budget)."
      : `, resets at ${formatInstant(subject.budgetResetAt)}.`;
  const head = message;
  message += ` This call would reserve ${formatUsd(estimateMicros)} (its prompt estimate plus max_tokens at the model's price)`;
  message += usedUp
    ? "; the budget is used up, so no call fits until it resets or is raised."
    : "; a lower max_tokens lowers that.";
  return new BudgetRefusal(
    message,
    plan.subject,
    spentMicros + estimateMicros > plan.maxMicros,
    spentMicros / 1e6,
    Math.max(0, plan.maxMicros - spentMicros - reservedMicros) / 1e6,
    usedUp ? undefined : head,
  );
}

/**
 * A 429 `budget_exceeded` refusal ({@link budgetError}) with what refused it: the budget's subject, and whether
 * settled spend alone refused the call (spend + this call's estimate over the budget, whatever calls in flight
 * reserve), which is when a budget counts as exhausted for the `budget_exceeded` webhook event
 * (`budgets/exhausted.ts`).
 */
export class BudgetRefusal extends GatewayError {
  constructor(
    message: string,
    readonly subject: LimitSubject,
    readonly bySettledSpend: boolean,
    /** Settled spend the admitter counted when it refused, USD (the database may not have booked it yet). */
    readonly spent: number,
    /**
     * What the budget could still reserve when it refused, USD: its amount less the settled spend and what calls
     * in flight reserve (never below 0). A call without an output cap is retried with a cap it can pay for
     * (`pipeline/steps/admit.ts`).
     */
    readonly available: number = 0,
    /** The message's first sentences (the budget, its spend and reset), when the budget is not used up. */
    private readonly head?: string,
  ) {
    super(429, message, { type: "budget_exceeded", code: "429", headers: { "x-should-retry": "false" } });
  }

  /**
   * The same refusal for a call that sent no output cap and that not even one output token would fit
   * (`pipeline/steps/admit.ts`): its message says the prompt alone, up to `promptCost` USD, is more than the
   * budget has left, rather than advising a lower `max_tokens` the client never sent. A used-up budget's
   * refusal is returned as it is (no call fits).
   */
  forPromptAlone(promptCost: number): BudgetRefusal {
    if (this.head === undefined) return this;
    const message =
      `${this.head} This call sets no max_tokens, and its prompt alone may cost up to ` +
      `${formatUsd(Math.ceil(promptCost * 1e6))} at the model's price (an upper bound of its tokens), more than the ${formatUsd(Math.floor(this.available * 1e6))} ` +
      "the budget has left; a shorter prompt, or a larger budget, lets it through.";
    return new BudgetRefusal(message, this.subject, this.bySettledSpend, this.spent, this.available);
  }
}

/**
 * An {@link Admission} that runs `finish` once: with the usage on settle, with `undefined` on release; later
 * calls are ignored, as the contract says. `extend` reserves more micro-USD for the call (see
 * {@link Admission.extend}); it is not asked once the admission is finished.
 */
export function onceAdmission(
  finish: (usage: SettledUsage | undefined) => void,
  extend: (micros: number) => Extension | Promise<Extension>,
): Admission {
  let done = false;
  const once = (usage: SettledUsage | undefined) => {
    if (done) return;
    done = true;
    finish(usage);
  };
  return {
    settle: (usage) => once(usage),
    release: () => once(undefined),
    extend: async (cost) => (done ? NOT_EXTENDED : extend(toMicros(cost))),
  };
}

/** The answer of a top-up that cannot be granted and says nothing about what the budgets have left. */
export const NOT_EXTENDED: Extension = Object.freeze({ granted: false, available: 0 });
/** The answer of a granted top-up. */
export const EXTENDED: Extension = Object.freeze({ granted: true });

/**
 * The answer of a top-up of `micros` against `budgets` (each: settled and reserved micro-USD, the limit), all
 * or none: granted when every one of them can hold it, else what the tightest could still reserve.
 */
export function extension(
  budgets: ReadonlyArray<{ spent: number; reserved: number; max: number }>,
  micros: number,
): Extension {
  let available = Number.POSITIVE_INFINITY;
  for (const b of budgets) available = Math.min(available, Math.max(0, b.max - b.spent - b.reserved));
  if (available >= micros && budgets.every((b) => b.spent < b.max)) return EXTENDED;
  return { granted: false, available: Number.isFinite(available) ? available / 1e6 : 0 };
}

/**
 * What a finished admission counts: its cost in micro-USD (see {@link toMicros}) and its whole, non-negative
 * tokens. A release (no usage) counts nothing.
 */
export function settledAmounts(usage: SettledUsage | undefined): { cost: number; tokens: number } {
  if (usage === undefined) return { cost: 0, tokens: 0 };
  return { cost: toMicros(usage.cost), tokens: Math.max(0, Math.round(usage.totalTokens)) };
}

/** The admission of a call with no limits to enforce (master key, unlimited subjects). */
export const unlimitedAdmission: Admission = Object.freeze({
  settle() {},
  release() {},
  extend: async () => EXTENDED,
});
