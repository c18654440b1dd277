/**
 * Two gateway instances (two `Limits` on the same Redis and prefix): limits are shared, exact under concurrency,
 * and budgets never overspend by more than what was in flight.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayError } from "../../../../services/gateway/src/errors/gateway-error.js";
import type { Limits } from "../../../../services/gateway/src/limits/index.js";
import type { Admission } from "../../../../services/gateway/src/limits/types.js";
import { openLimits } from "../../../helpers/limits.js";
import { deleteKeys, inspector, ManualClock, uniquePrefix, waitFor } from "../../../helpers/redis.js";
import { keySubject, refusal, request, T0, userSubject } from "./subjects.js";

const clock = new ManualClock(T0 + 5_000);
const prefix = uniquePrefix("limits-shared");
const instances: Limits[] = [];

const instance = (i: number): Limits => instances[i % instances.length]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  for (let i = 0; i < 2; i++) instances.push(await openLimits(clock, prefix));
});

afterAll(async () => {
  await Promise.all(instances.map((limits) => limits.close()));
  await deleteKeys(prefix);
});

describe("two instances sharing Redis", () => {
  it("an rpm limit of N admits exactly N per window across both, the N+1th gets 429, the next window admits", async () => {
    const n = 25;
    const key = keySubject({ rpmLimit: n, alias: "shared" });
    const user = userSubject();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 80 }, (_, i) => instance(i).admitter.admit(request([key, user]))),
    );
    const admitted = outcomes.filter((o) => o.status === "fulfilled");
    const refused = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as GatewayError] : []));
    expect(admitted).toHaveLength(n);
    expect(refused).toHaveLength(80 - n);
    for (const error of refused) {
      expect(error.status).toBe(429);
      expect(error.headers["retry-after"]).toBe("55");
      expect(error.message).toContain(`key "shared" allows ${n} requests per minute`);
    }
    clock.advance(55_000);
    const next = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => instance(i).admitter.admit(request([key, user]))),
    );
    expect(next.filter((o) => o.status === "fulfilled")).toHaveLength(n);
  });

  it("tokens settled on one instance count against tpm on the other", async () => {
    clock.set(T0 + 10 * 60_000);
    const user = userSubject({ tpmLimit: 1000, id: "carol" });
    (await instance(0).admitter.admit(request([keySubject(), user]))).settle({ cost: 0, totalTokens: 1000 });
    // The settle is fire-and-forget: wait until it has landed, as seen from the other instance.
    await waitFor("settle applied", async () => {
      try {
        (await instance(1).admitter.admit(request([user]))).release();
        return false;
      } catch {
        return true;
      }
    });
    const error = await refusal(instance(1).admitter.admit(request([keySubject(), user])));
    expect(error.message).toContain('user "carol" allows 1000 tokens per minute (tpm_limit); 1000 were used');
  });

  it("200 concurrent calls against a small budget: spend stays within budget + in-flight reservations", async () => {
    clock.set(T0 + 20 * 60_000);
    const budget = 1;
    const estimate = 0.02;
    const key = keySubject({ maxBudget: budget, alias: "small" });
    const user = userSubject({ maxBudget: 50 });
    const barrier = keySubject({ rpmLimit: 1_000_000 });
    /** [admit issued, settle applied] per admitted call, performance.now() ms. */
    const inFlight: Array<[number, number]> = [];
    let settledMicros = 0;
    const refusals: GatewayError[] = [];

    const call = async (i: number) => {
      await sleep(Math.random() * 200);
      const issued = performance.now();
      let admission: Admission;
      try {
        admission = await instance(i).admitter.admit(request([key, user], estimate));
      } catch (error) {
        refusals.push(error as GatewayError);
        return;
      }
      await sleep(Math.random() * 10);
      // Real cost between half and twice the estimate: an underestimate may overspend, but only by what was in flight.
      const cost = Math.round(estimate * (0.5 + Math.random() * 1.5) * 1e6) / 1e6;
      settledMicros += Math.round(cost * 1e6);
      admission.settle({ cost, totalTokens: 10 });
      // One connection per instance answers in order: once this admit returns, the settle above has been applied.
      (await instance(i).admitter.admit(request([barrier]))).release();
      inFlight.push([issued, performance.now()]);
    };
    await Promise.all(Array.from({ length: 200 }, (_, i) => call(i)));

    // Most calls in flight at any instant (admitted, settle not yet applied): a sweep over the intervals.
    const events = inFlight.flatMap(([from, to]) => [
      [from, 1],
      [to, -1],
    ]);
    events.sort((a, b) => a[0]! - b[0]! || b[1]! - a[1]!);
    let open = 0;
    let maxInFlight = 0;
    for (const [, delta] of events) {
      open += delta!;
      maxInFlight = Math.max(maxInFlight, open);
    }

    expect(inFlight.length).toBeGreaterThan(0);
    expect(refusals.length).toBeGreaterThan(0);
    // Every admit checked spent + reserved + estimate <= budget; only calls in flight at the last admit can add
    // more than their reservation, each by at most (2 - 1) × estimate.
    expect(settledMicros / 1e6).toBeLessThanOrEqual(budget + maxInFlight * estimate + 1e-9);
    for (const error of refusals) {
      expect(error.status).toBe(429);
      expect(error.type).toBe("budget_exceeded");
      expect(error.message).toMatch(/^Budget has been exceeded! Key budget \("small"\): \$1\.00, spend: \$/);
    }

    // Once both instances have returned their leases, Redis agrees to the micro-dollar, and no lease is left
    // behind on either subject.
    await Promise.all(instances.map((limits) => limits.flush()));
    const redis = inspector();
    try {
      const [spent, reserved] = await redis.hmget(
        `${prefix}key:${key.id}:budget:lifetime`,
        "spent",
        "reserved",
      );
      expect(Number(spent)).toBe(settledMicros);
      expect(Number(reserved)).toBe(0);
      expect(await redis.zcard(`${prefix}key:${key.id}:budget:lifetime:leases`)).toBe(0);
      expect(await redis.hget(`${prefix}user:${user.id}:budget:lifetime`, "spent")).toBe(
        String(settledMicros),
      );
    } finally {
      redis.disconnect();
    }
  });

  it("the overspend bound is tight: calls in flight that cost more than estimated can pass the budget by that much", async () => {
    const key = keySubject({ maxBudget: 0.06, alias: "tight" });
    const admitted = [
      await instance(0).admitter.admit(request([key], 0.02)),
      await instance(1).admitter.admit(request([key], 0.02)),
      await instance(0).admitter.admit(request([key], 0.02)),
    ];
    await refusal(instance(1).admitter.admit(request([key], 0.02)));
    for (const admission of admitted) admission.settle({ cost: 0.04, totalTokens: 1 });
    // Until the settles reach Redis a zero-cost call still fits (it is admitted and released): poll.
    await waitFor("settles applied", async () => {
      try {
        (await instance(1).admitter.admit(request([key], 0))).release();
        return false;
      } catch (error) {
        return (error as Error).message.includes("spend: $0.12,");
      }
    });
  });

  it("gives every key it writes a TTL, refusals and settles of a fresh budget included", async () => {
    const key = keySubject({ rpmLimit: 5, tpmLimit: 500, maxBudget: 1, spend: 1, alias: "ttl" });
    await refusal(instance(0).admitter.admit(request([key], 0.01))); // seeds the budget from the database, refuses
    const user = userSubject({ rpmLimit: 5, tpmLimit: 500, maxBudget: 1, budgetResetAt: T0 + 86_400_000 });
    const admission = await instance(1).admitter.admit(request([user], 0));
    admission.settle({ cost: 0.25, totalTokens: 50 });
    (await instance(1).admitter.admit(request([user], 0.1))).release();
    await instance(1).flush(); // returns the lease: its set is left empty (deleted)
    const redis = inspector();
    try {
      const keys = [
        ...(await redis.keys(`${prefix}key:${key.id}:*`)),
        ...(await redis.keys(`${prefix}user:${user.id}:*`)),
      ];
      expect(keys.map((k) => k.slice(prefix.length).replace(/^(key|user):[^:]+:/, "")).sort()).toEqual(
        [
          "budget:lifetime",
          `budget:${T0 + 86_400_000}`,
          `rpm:${Math.floor(clock.now() / 60_000)}`,

          `tpm:${Math.floor(clock.now() / 60_000)}`,
        ].sort(),
      );
      for (const k of keys) expect(await redis.pttl(k)).toBeGreaterThan(0);
      // Returned: no lease set left. A budget without a reservation (estimate 0) still counts its settled cost.
      expect(await redis.hget(`${prefix}user:${user.id}:budget:${T0 + 86_400_000}`, "spent")).toBe("250000");
    } finally {
      redis.disconnect();
    }
  });

  it("with exact estimates, 200 concurrent calls never spend past the budget", async () => {
    const key = keySubject({ maxBudget: 0.5 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) => instance(i).admitter.admit(request([key], 0.01))),
    );
    const admitted = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
    expect(admitted).toHaveLength(50);
    for (const admission of admitted) admission.settle({ cost: 0.01, totalTokens: 1 });
  });
});
