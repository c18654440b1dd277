/**
 * The floors the fallback starts from when Redis is gone (shared-floors.ts): what Redis last reported per
 * subject, for its latest window and budget period, for as many subjects as the key cache holds keys.
 */
import { describe, expect, it } from "vitest";
import { planSubjects } from "../../../../services/gateway/src/limits/rules.js";
import { MAX_FLOORS, SharedFloors } from "../../../../services/gateway/src/limits/shared-floors.js";
import { keySubject } from "./subjects.js";

const limited = () =>
  planSubjects([keySubject({ rpmLimit: 100, tpmLimit: 10_000, maxBudget: 5, budgetResetAt: 1_000 })])[0]!;
const counters = { rpmUsed: 7, tpmUsed: 700, spentMicros: 2_000, reservedMicros: 500 };

describe("shared floors", () => {
  it("give a subject's rpm and tpm for the window reported and its budget for the period reported, else 0", () => {
    const floors = new SharedFloors();
    const plan = limited();
    floors.learn(plan, 10, counters);
    expect([floors.rpm(plan, 10), floors.tpm(plan, 10), floors.budget(plan)]).toEqual([7, 700, 2_500]);
    expect([floors.rpm(plan, 11), floors.tpm(plan, 11)]).toEqual([0, 0]);
    expect(floors.budget({ ...plan, period: "2000" })).toBe(0);
    // A report of the next window counts there; the budget is kept until reported again.
    floors.learn(plan, 11, { rpmUsed: 1, tpmUsed: -1, spentMicros: -1, reservedMicros: -1 });
    expect([floors.rpm(plan, 11), floors.tpm(plan, 11), floors.budget(plan)]).toEqual([1, 0, 2_500]);
    expect(floors.rpm(limited(), 10)).toBe(0);
  });

  it("remember 100,000 subjects with all three limits, dropping the least recently updated beyond that", () => {
    const floors = new SharedFloors();
    const plans = Array.from({ length: 100_000 }, limited);
    for (const plan of plans) floors.learn(plan, 10, counters);
    expect(MAX_FLOORS).toBe(100_000);
    expect(floors.rpm(plans[0]!, 10)).toBe(7);
    expect(floors.budget(plans[0]!)).toBe(2_500);
    floors.learn(plans[0]!, 10, counters); // now the most recently updated
    const more = Array.from({ length: 10 }, limited);
    for (const plan of more) floors.learn(plan, 10, counters);
    expect(floors.size).toBeLessThanOrEqual(MAX_FLOORS);
    expect(floors.rpm(plans[0]!, 10)).toBe(7);
    expect(floors.rpm(plans[1]!, 10)).toBe(0);
    expect(more.every((plan) => floors.tpm(plan, 10) === 700)).toBe(true);
    expect(floors.tpm(plans.at(-1)!, 10)).toBe(700);
  });
});
