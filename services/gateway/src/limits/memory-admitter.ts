/**
 * The in-process {@link Admitter}: the same rules as the Redis one (see `rules.ts`), with counters in this
 * process's memory. Used when the gateway has no REDIS_URL, and as the fallback while Redis is unreachable, in
 * which case every instance enforces each limit on its own (an rpm limit of N admits up to N per instance).
 * Budget counters start from the database's spend (`subject.spend`) and never go below it.
 */
import type { Clock } from "../time/clock.js";
import { LocalSlots } from "./parallel.js";
import {
  budgetCounterTtlMs,
  budgetError,
  extension,
  onceAdmission,
  planSubjects,
  RESERVATION_TTL_MS,
  rateLimitError,
  type SubjectPlan,
  settledAmounts,
  toMicros,
  unlimitedAdmission,
  WINDOW_MS,
  windowIndex,
} from "./rules.js";
import type { CounterFloors } from "./shared-floors.js";
import type { Admission, AdmissionRequest, Admitter, Extension, SettledUsage } from "./types.js";

interface WindowCounter {
  index: number;
  used: number;
}

interface BudgetCounter {
  /** micro-USD */
  spent: number;
  /** micro-USD, the sum of `reservations` */
  reserved: number;
  /** By admission id, in admission order (so in expiry order). */
  reservations: Map<number, { amount: number; expiresAt: number }>;
  /** Clock time after which the counter may be dropped. */
  expiresAt: number;
}

/** Options of {@link InProcessAdmitter}. */
export interface InProcessAdmitterOptions {
  clock: Clock;
  /** Reservation lifetime, ms. Default {@link RESERVATION_TTL_MS}. */
  reservationTtlMs?: number;
}

/** Rate limits and budgets kept in memory; exact within one process (JavaScript runs each admit to completion). */
export class InProcessAdmitter implements Admitter {
  private readonly clock: Clock;
  private readonly reservationTtlMs: number;
  private readonly rpm = new Map<string, WindowCounter>();
  private readonly tpm = new Map<string, WindowCounter>();
  private readonly budgets = new Map<string, BudgetCounter>();
  /** Calls in flight per subject with `max_parallel_requests` (`parallel.ts`). */
  private readonly slots = new LocalSlots();
  private nextAdmission = 0;
  private lastSweep: number;

  constructor(options: InProcessAdmitterOptions) {
    this.clock = options.clock;
    this.reservationTtlMs = options.reservationTtlMs ?? RESERVATION_TTL_MS;
    this.lastSweep = this.clock.now();
  }

  /**
   * @throws GatewayError 429 `rate_limit_error` (rpm, tpm, or `max_parallel_requests`: `parallel.ts`) or
   *   `budget_exceeded` (see `rules.ts`).
   */
  async admit(request: AdmissionRequest): Promise<Admission> {
    const plans = planSubjects(request.subjects);
    if (plans.length === 0) return unlimitedAdmission;
    return this.admitPlans(plans, toMicros(request.estimatedCost));
  }

  /**
   * The synchronous core of {@link admit}, for callers that already planned the subjects. `floors`: the least
   * each counter starts from (the Redis admitter's last view of the shared counters), none by default.
   */
  admitPlans(plans: SubjectPlan[], estimate: number, floors?: CounterFloors): Admission {
    const now = this.clock.now();
    const index = windowIndex(now);
    this.sweep(now);
    const budgets: Array<BudgetCounter | undefined> = [];
    for (const plan of plans) {
      if (plan.rpm >= 0) {
        const used = raise(this.rpm, plan.counterId, index, floors?.rpm(plan, index) ?? 0);
        if (used >= plan.rpm) throw rateLimitError(plan, "rpm", used, now);
      }
      if (plan.tpm >= 0) {
        const used = raise(this.tpm, plan.counterId, index, floors?.tpm(plan, index) ?? 0);
        if (used >= plan.tpm) throw rateLimitError(plan, "tpm", used, now);
      }
      const budget = plan.maxMicros >= 0 ? this.budget(plan, now, floors?.budget(plan) ?? 0) : undefined;
      if (
        budget !== undefined &&
        (budget.spent >= plan.maxMicros || budget.spent + budget.reserved + estimate > plan.maxMicros)
      ) {
        throw budgetError(plan, budget.spent, budget.reserved, estimate);
      }
      budgets.push(budget);
    }
    this.slots.take(plans);
    const id = this.nextAdmission++;
    for (const plan of plans) if (plan.rpm >= 0) add(this.rpm, plan.counterId, index, 1);
    if (estimate > 0) {
      for (const budget of budgets) {
        if (budget === undefined) continue;
        budget.reserved += estimate;
        budget.reservations.set(id, { amount: estimate, expiresAt: now + this.reservationTtlMs });
      }
    }
    return onceAdmission(
      (usage) => this.finish(plans, budgets, id, usage),
      (extra) => this.extend(plans, budgets, id, extra),
    );
  }

  /** A top-up of `extra` micro-USD on the budgets of admission `id`, all or none (see `Admission.extend`). */
  private extend(
    plans: SubjectPlan[],
    budgets: Array<BudgetCounter | undefined>,
    id: number,
    extra: number,
  ): Extension {
    const now = this.clock.now();
    const held: Array<{ spent: number; reserved: number; max: number }> = [];
    plans.forEach((plan, i) => {
      const budget = budgets[i];
      if (budget === undefined) return;
      this.reclaimExpired(budget, now);
      held.push({ spent: budget.spent, reserved: budget.reserved, max: plan.maxMicros });
    });
    const answer = extension(held, extra);
    if (!answer.granted || extra <= 0) return answer;
    for (const budget of budgets) {
      if (budget === undefined) continue;
      budget.reserved += extra;
      const reservation = budget.reservations.get(id);
      if (reservation !== undefined) reservation.amount += extra;
      else budget.reservations.set(id, { amount: extra, expiresAt: now + this.reservationTtlMs });
    }
    return answer;
  }

  private finish(
    plans: SubjectPlan[],
    budgets: Array<BudgetCounter | undefined>,
    id: number,
    usage: SettledUsage | undefined,
  ): void {
    const { cost, tokens } = settledAmounts(usage);
    const index = windowIndex(this.clock.now());
    this.slots.give(plans);
    plans.forEach((plan, i) => {
      if (tokens > 0 && plan.tpm >= 0) add(this.tpm, plan.counterId, index, tokens);
      const budget = budgets[i];
      if (budget === undefined) return;
      const reservation = budget.reservations.get(id);
      if (reservation !== undefined) {
        budget.reservations.delete(id);
        budget.reserved -= reservation.amount;
      }
      budget.spent += cost;
    });
  }

  /**
   * The period's counter: created from the database's spend (or `floorMicros` when higher), raised to either
   * when they are ahead of it.
   */
  private budget(plan: SubjectPlan, now: number, floorMicros: number): BudgetCounter {
    const key = `${plan.counterId}:${plan.period}`;
    const expiresAt = now + budgetCounterTtlMs(plan.subject, now);
    const seed = Math.max(plan.seedMicros, floorMicros);
    let budget = this.budgets.get(key);
    if (budget === undefined) {
      budget = { spent: seed, reserved: 0, reservations: new Map(), expiresAt };
      this.budgets.set(key, budget);
      return budget;
    }
    budget.expiresAt = expiresAt;
    if (seed > budget.spent) budget.spent = seed;
    this.reclaimExpired(budget, now);
    return budget;
  }

  /** Drops the reservations past their lifetime (never settled: a crashed request). */
  private reclaimExpired(budget: BudgetCounter, now: number): void {
    for (const [id, reservation] of budget.reservations) {
      if (reservation.expiresAt > now) break;
      budget.reservations.delete(id);
      budget.reserved -= reservation.amount;
    }
  }

  /** Drops counters of past windows and periods, at most once per window. */
  private sweep(now: number): void {
    if (now - this.lastSweep < WINDOW_MS) return;
    this.lastSweep = now;
    const index = windowIndex(now);
    for (const counters of [this.rpm, this.tpm]) {
      for (const [key, counter] of counters) if (counter.index < index) counters.delete(key);
    }
    for (const [key, budget] of this.budgets) if (budget.expiresAt <= now) this.budgets.delete(key);
  }
}

/** The window's count, first raised to `floor` if it is below (a floor of 0 changes nothing). */
function raise(counters: Map<string, WindowCounter>, key: string, index: number, floor: number): number {
  const counter = counters.get(key);
  const used = counter !== undefined && counter.index === index ? counter.used : 0;
  if (floor <= used) return used;
  if (counter === undefined) counters.set(key, { index, used: floor });
  else {
    counter.index = index;
    counter.used = floor;
  }
  return floor;
}

function add(counters: Map<string, WindowCounter>, key: string, index: number, amount: number): void {
  const counter = counters.get(key);
  if (counter === undefined) counters.set(key, { index, used: amount });
  else if (counter.index === index) counter.used += amount;
  else {
    counter.index = index;
    counter.used = amount;
  }
}
