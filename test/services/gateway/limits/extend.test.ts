/**
 * Top-ups of an admitted call's reservation (`Admission.extend`): granted while the budgets hold them, refused
 * with what they have left, atomic across two instances sharing Redis, not blocked by rpm, and released with the
 * call (settle books the real cost only). The same rules in process (no Redis).
 */
import { describe, expect, it } from "vitest";
import { limitsPerMode } from "../../../helpers/limits.js";
import { ManualClock } from "../../../helpers/redis.js";
import { keySubject, refusal, request, T0, userSubject } from "./subjects.js";

const clock = new ManualClock(T0 + 5_000);
const { shared, local: locals } = limitsPerMode(clock, "limits-extend");

describe.each([
  ["two instances over Redis", () => shared],
  ["in process", () => [locals[0]!, locals[0]!]],
])("Admission.extend, %s", (_name, instances) => {
  it("grants top-ups while the budget holds them, then refuses with what is left; settle frees them", async () => {
    const [a, b] = instances();
    const key = keySubject({ maxBudget: 1, alias: "extend" });
    const first = await a!.admitter.admit(request([key], 0.3));
    expect(await first.extend(0.3)).toEqual({ granted: true });
    // 0.6 held by the first call: the other instance's call of 0.3 fits, a top-up of 0.2 more does not.
    const second = await b!.admitter.admit(request([key], 0.3));
    const refused = await second.extend(0.2);
    expect(refused.granted).toBe(false);
    expect(refused.granted ? 0 : refused.available).toBeCloseTo(0.1, 6);
    expect(await second.extend(0.1)).toEqual({ granted: true });
    // The budget is fully held now: no admission and no top-up fits.
    expect((await refusal(a!.admitter.admit(request([key], 0.01)))).type).toBe("budget_exceeded");
    expect((await first.extend(0.01)).granted).toBe(false);
    // Settling books the real cost and frees every top-up: 0.55 spent, 0.4 of the second held, 0.05 free.
    first.settle({ cost: 0.55, totalTokens: 10 });
    await a!.flush();
    expect(await second.extend(0.05)).toEqual({ granted: true });
    expect((await second.extend(0.01)).granted).toBe(false);
    second.release();
    // A finished admission is not extended.
    expect((await second.extend(0.01)).granted).toBe(false);
  });

  it("a top-up needs no request of an rpm limit that is used up, and checks every budget (key and user)", async () => {
    const [a, b] = instances();
    const key = keySubject({ rpmLimit: 1, maxBudget: 10 });
    const user = userSubject({ maxBudget: 0.5 });
    const call = await a!.admitter.admit(request([key, user], 0.2));
    expect((await refusal(b!.admitter.admit(request([key, user], 0.01)))).type).toBe("rate_limit_error");
    expect(await call.extend(0.25)).toEqual({ granted: true });
    // The user's budget (0.5) refuses the next one although the key's (10) has room.
    const over = await call.extend(0.1);
    expect(over.granted ? 0 : over.available).toBeCloseTo(0.05, 6);
    call.settle({ cost: 0.45, totalTokens: 1 });
  });
});

describe("Admission.extend over Redis, concurrently", () => {
  it("top-ups from two instances on one budget never hold more than it", async () => {
    const key = keySubject({ maxBudget: 1 });
    const calls = await Promise.all(
      Array.from({ length: 10 }, (_, i) => shared[i % 2]!.admitter.admit(request([key], 0.02))),
    );
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => calls[i % calls.length]!.extend(0.01)),
    );
    const granted = answers.filter((answer) => answer.granted).length;
    // 0.2 admitted, so exactly 80 top-ups of 0.01 fit in the budget of 1.
    expect(granted).toBe(80);
    for (const call of calls) call.release();
  });
});
