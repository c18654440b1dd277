/**
 * A budget refusal on one instance must leave nothing behind that lets a later, smaller reservation on that
 * instance overlook what another instance reserved meanwhile: two instances sharing Redis never hold
 * reservations past the budget together.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Limits } from "../../../../services/gateway/src/limits/index.js";
import { openLimits } from "../../../helpers/limits.js";
import { deleteKeys, ManualClock, uniquePrefix } from "../../../helpers/redis.js";
import { keySubject, refusal, request, T0 } from "./subjects.js";

const clock = new ManualClock(T0 + 5_000);
const prefix = uniquePrefix("limits-refused-then-admitted");
const instances: Limits[] = [];

beforeAll(async () => {
  for (let i = 0; i < 2; i++) instances.push(await openLimits(clock, prefix));
});
afterAll(async () => {
  await Promise.all(instances.map((limits) => limits.close()));
  await deleteKeys(prefix);
});

describe("a refusal, another instance's reservation, then a smaller call", () => {
  it("refuses the smaller call when the two reservations together would pass the budget", async () => {
    const [a, b] = instances as [Limits, Limits];
    const key = keySubject({ maxBudget: 0.0102 });
    const big = await refusal(a.admitter.admit(request([key], 0.4118)));
    expect(big.status).toBe(429);
    const other = await b.admitter.admit(request([key], 0.00739));
    const again = await a.admitter.admit(request([key], 0.0102)).then(
      (admission) => ({ admitted: true as const, admission }),
      (error: unknown) => ({ admitted: false as const, error }),
    );
    if (again.admitted) again.admission.release();
    other.release();
    expect(again.admitted).toBe(false);
  });

  it("holds under concurrency: a refused call retried smaller while the other instance reserves", async () => {
    const [a, b] = instances as [Limits, Limits];
    for (let round = 0; round < 20; round++) {
      const key = keySubject({ maxBudget: 0.0102 });
      const retried = a.admitter.admit(request([key], 0.4118)).then(
        () => undefined,
        () => a.admitter.admit(request([key], 0.0102)),
      );
      const [first, second] = await Promise.allSettled([retried, b.admitter.admit(request([key], 0.00739))]);
      const held = [first, second].flatMap((o) => (o.status === "fulfilled" && o.value ? [o.value] : []));
      for (const admission of held) admission.release();
      expect(held.length, `round ${round}`).toBeLessThanOrEqual(1);
    }
  });
});
