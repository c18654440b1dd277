/**
 * The last state of the shared (Redis) counters this instance saw, kept so that the in-process fallback never
 * starts looser than the shared state it replaces: when Redis is declared gone, each fallback counter is raised
 * to what Redis last reported for it (rpm/tpm used in the window; budget spent plus every reservation in
 * flight, this instance's and the others', counted as spent since nobody can settle them now).
 *
 * One entry per subject (its rpm and tpm of the latest window reported and its budget of the latest period), so
 * learning costs no string building. Bounded: at most {@link MAX_FLOORS} subjects, the least recently updated
 * dropped first, in batches (a Map drops its oldest entries in one pass, not one scan per update).
 */
import type { SubjectPlan } from "./rules.js";

/** Subjects remembered, at most: as many as the key cache holds keys (docs/leases.md). */
export const MAX_FLOORS = 100_000;
/** Subjects dropped at once when {@link MAX_FLOORS} is passed. */
const EVICT_BATCH = 1_000;

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

/** One subject's last report: rpm/tpm of window `index` (-1: none), budget of `period` (-1: none). */
interface Floor {
  index: number;
  rpm: number;
  tpm: number;
  period: string;
  budget: number;
}

/** Floors learnt from admit replies. */
export class SharedFloors implements CounterFloors {
  private readonly floors = new Map<string, Floor>();

  /** Records what Redis reported for `plan` after an admit in window `index`. */
  learn(plan: SubjectPlan, index: number, counters: SharedCounters): void {
    const id = plan.counterId;
    let floor = this.floors.get(id);
    if (floor === undefined) {
      floor = { index, rpm: -1, tpm: -1, period: plan.period, budget: -1 };
    } else {
      this.floors.delete(id);
    }
    this.floors.set(id, floor);
    if (floor.index !== index) {
      floor.index = index;
      floor.rpm = -1;
      floor.tpm = -1;
    }
    if (counters.rpmUsed >= 0) floor.rpm = counters.rpmUsed;
    if (counters.tpmUsed >= 0) floor.tpm = counters.tpmUsed;
    if (counters.spentMicros >= 0) {
      floor.period = plan.period;
      floor.budget = counters.spentMicros + counters.reservedMicros;
    }
    if (this.floors.size > MAX_FLOORS) this.evict(this.floors.size - MAX_FLOORS + EVICT_BATCH);
  }

  rpm(plan: SubjectPlan, index: number): number {
    const floor = this.floors.get(plan.counterId);
    return floor !== undefined && floor.index === index ? Math.max(0, floor.rpm) : 0;
  }

  tpm(plan: SubjectPlan, index: number): number {
    const floor = this.floors.get(plan.counterId);
    return floor !== undefined && floor.index === index ? Math.max(0, floor.tpm) : 0;
  }

  budget(plan: SubjectPlan): number {
    const floor = this.floors.get(plan.counterId);
    return floor !== undefined && floor.period === plan.period ? Math.max(0, floor.budget) : 0;
  }

  /** Number of subjects remembered. */
  get size(): number {
    return this.floors.size;
  }

  /** Drops the `count` least recently updated subjects. */
  private evict(count: number): void {
    let left = count;
    for (const id of this.floors.keys()) {
      if (left-- <= 0) break;
      this.floors.delete(id);
    }
  }
}
