/**
 * Durations in LiteLLM's syntax (`30s`, `30m`, `30h`, `30d`; also `2w` and `1mo`, calendar months in UTC) and
 * budget periods that roll over: a budget with a `budget_duration` resets its spend to 0 at
 * `budget_reset_at`, and the next reset is one duration later, on a fixed schedule.
 */

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** A parsed duration: `amount` of `unit` (`mo` is a calendar month, the others fixed lengths). */
export interface Duration {
  amount: number;
  unit: keyof typeof UNIT_MS | "mo";
}

const DURATION_PATTERN = /^([1-9][0-9]{0,5})(s|m|h|d|w|mo)$/;

/** Parses `30s`/`30m`/`30h`/`30d`/`2w`/`1mo`; null when the text is not a positive duration. */
export function parseDuration(text: string): Duration | null {
  const match = DURATION_PATTERN.exec(text.trim());
  if (match === null) return null;
  return { amount: Number(match[1]), unit: match[2] as Duration["unit"] };
}

/** True when {@link parseDuration} accepts the text. */
export const isDuration = (text: string): boolean => parseDuration(text) !== null;

/** `epochMs` moved by `times` durations (negative moves back). Months are calendar months in UTC. */
export function addDuration(epochMs: number, duration: Duration, times = 1): number {
  if (duration.unit === "mo") {
    const date = new Date(epochMs);
    date.setUTCMonth(date.getUTCMonth() + duration.amount * times);
    return date.getTime();
  }
  return epochMs + duration.amount * UNIT_MS[duration.unit] * times;
}

/**
 * `epochMs` plus the duration given as text.
 * @throws Error when the text is not a duration (validate input with {@link isDuration} first).
 */
export function afterDuration(epochMs: number, text: string): number {
  const duration = parseDuration(text);
  if (duration === null) throw new Error(`not a duration: ${text}`);
  return addDuration(epochMs, duration);
}

/** The budget state of a key or user as stored. */
export interface BudgetState {
  /** USD spent in the stored period. */
  spend: number;
  budgetDuration: string | null;
  /** Epoch ms, or null. */
  budgetResetAt: number | null;
}

/** The budget state as of a moment, after any rollovers due. */
export interface CurrentPeriod {
  /** USD spent in the current period (0 when it rolled over since it was stored). */
  spend: number;
  /** End of the current period, epoch ms, or null for a lifetime budget. */
  budgetResetAt: number | null;
  /** Start of the current period, epoch ms, or null for a lifetime budget. */
  periodStart: number | null;
  /** True when the stored state is from an earlier period (the row needs spend=0 and the new reset time). */
  rolled: boolean;
}

/**
 * Rolls a stored budget state forward to `now` (epoch ms): when `budgetResetAt` has passed, spend is 0 and the
 * reset moves on by whole durations until it lies after `now`. A state without a parsable duration or reset
 * time is a lifetime budget and never rolls.
 */
export function currentPeriod(state: BudgetState, now: number): CurrentPeriod {
  const duration = state.budgetDuration === null ? null : parseDuration(state.budgetDuration);
  if (duration === null || state.budgetResetAt === null) {
    return { spend: state.spend, budgetResetAt: state.budgetResetAt, periodStart: null, rolled: false };
  }
  let resetAt = state.budgetResetAt;
  const rolled = resetAt <= now;
  if (rolled) {
    if (duration.unit === "mo") {
      while (resetAt <= now) resetAt = addDuration(resetAt, duration);
    } else {
      const step = addDuration(0, duration);
      resetAt += (Math.floor((now - resetAt) / step) + 1) * step;
    }
  }
  return {
    spend: rolled ? 0 : state.spend,
    budgetResetAt: resetAt,
    periodStart: addDuration(resetAt, duration, -1),
    rolled,
  };
}
