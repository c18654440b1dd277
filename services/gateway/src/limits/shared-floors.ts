/**
 * The last state of the shared (Redis) counters this instance saw, kept so that the in-process fallback never
 * starts looser than the shared state it replaces: when Redis is declared gone, each fallback counter is raised
 * to what Redis last reported for it (rpm/tpm used in the window; budget spent plus every reservation in
 * flight, this instance's and the others', counted as spent since nobody can settle them now).
 *
 * Bounded: at most {@link MAX_FLOORS} counters, the least recently updated dropped first.
 */
import type { SubjectPlan } from "./rules.js";

/** Counters remembered, at most. */
export const MAX_FLOORS = 50_000;

/** What the fallback asks: the least a counter may start from. All 0 when nothing is known. */
export interface CounterFloors {
  /** Requests counted in window `index`. */
  rpm(plan: SubjectPlan, index: number): number;
  /** Tokens counted in window `index`. */
  tpm(plan: SubjectPlan, index: number): number;
  /** Spent plus reserved in the budget's period, micro-USD. */
  budget(plan: SubjectPlan): number;
}

/** The counters one admit reply reported for one subject (-1 where the subject has no such limit). */
export interface SharedCounters {
  rpmUsed: number;
  tpmUsed: number;
  spentMicros: number;
  reservedMicros: number;
}

/** Floors learnt from admit replies. */
export class SharedFloors implements CounterFloors {
  private readonly floors = new Map<string, number>();

  /** Records what Redis reported for `plan` after an admit in window `index`. */
  learn(plan: SubjectPlan, index: number, counters: SharedCounters): void {
    if (counters.rpmUsed >= 0) this.set(`${plan.counterId}:rpm:${index}`, counters.rpmUsed);
    if (counters.tpmUsed >= 0) this.set(`${plan.counterId}:tpm:${index}`, counters.tpmUsed);
    if (counters.spentMicros >= 0) {
      this.set(`${plan.counterId}:budget:${plan.period}`, counters.spentMicros + counters.reservedMicros);
    }
  }

  rpm(plan: SubjectPlan, index: number): number {
    return this.floors.get(`${plan.counterId}:rpm:${index}`) ?? 0;
  }

  tpm(plan: SubjectPlan, index: number): number {
    return this.floors.get(`${plan.counterId}:tpm:${index}`) ?? 0;
  }

  budget(plan: SubjectPlan): number {
    return this.floors.get(`${plan.counterId}:budget:${plan.period}`) ?? 0;
  }

  /** Number of counters remembered. */
  get size(): number {
    return this.floors.size;
  }

  private set(key: string, value: number): void {
    this.floors.delete(key);
    this.floors.set(key, value);
    if (this.floors.size > MAX_FLOORS) {
      const oldest = this.floors.keys().next().value;
      if (oldest !== undefined) this.floors.delete(oldest);
    }
  }
}
