/**
 * The limit rules, run against both admitters: shared through Redis and in process. Same inputs, same answers:
 * that is what lets the gateway fall back from one to the other during a Redis outage.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Limits } from "../../../../services/gateway/src/limits/index.js";
import { BudgetRefusal } from "../../../../services/gateway/src/limits/rules.js";
import { openLimits } from "../../../helpers/limits.js";
import { deleteKeys, inspector, ManualClock, uniquePrefix } from "../../../helpers/redis.js";
import { keySubject, refusal, request, T0, userSubject } from "./subjects.js";

const modes = [{ mode: "redis" as const }, { mode: "in-process" as const }];

describe.each(modes)("admitter ($mode)", ({ mode }) => {
  const clock = new ManualClock(T0);
  const prefix = uniquePrefix(`limits-${mode}`);
  let limits: Limits;

  beforeAll(async () => {
    limits = await openLimits(clock, mode === "redis" ? prefix : undefined);
  });

  afterAll(async () => {
    await limits.close();
    await deleteKeys(prefix);
  });

  it("reports its mode in readiness", async () => {
    expect((await limits.readiness()).status).toBe(mode === "redis" ? "connected" : "disabled");
  });

  it("admits exactly rpm calls per fixed window, then 429 with retry-after until the window ends", async () => {
    clock.set(T0 + 23_000);
    const key = keySubject({ rpmLimit: 3, alias: "ci-key" });
    for (let i = 0; i < 3; i++) (await limits.admitter.admit(request([key]))).release();
    const error = await refusal(limits.admitter.admit(request([key])));
    expect(error.status).toBe(429);
    expect(error.type).toBe("rate_limit_error");
    expect(error.headers["retry-after"]).toBe("37");
    expect(error.message).toContain('key "ci-key"');
    expect(error.message).toContain("3 requests per minute (rpm_limit)");

    clock.advance(36_500);
    expect((await refusal(limits.admitter.admit(request([key])))).headers["retry-after"]).toBe("1");
    clock.advance(500);
    await expect(limits.admitter.admit(request([key]))).resolves.toBeDefined();
  });

  it("counts settled tokens against tpm and refuses once the window's tokens reach the limit", async () => {
    clock.set(T0 + 10 * 60_000);
    const key = keySubject({ tpmLimit: 100 });
    (await limits.admitter.admit(request([key]))).settle({ cost: 0, totalTokens: 60 });
    (await limits.admitter.admit(request([key]))).settle({ cost: 0, totalTokens: 50 });
    const error = await refusal(limits.admitter.admit(request([key])));
    expect(error.type).toBe("rate_limit_error");
    expect(error.message).toContain("100 tokens per minute (tpm_limit); 110 were used");
    expect(error.message).toContain(`key ${key.id.slice(0, 8)}…`);
    expect(error.message).not.toContain(key.id);
    clock.advance(60_000);
    await expect(limits.admitter.admit(request([key]))).resolves.toBeDefined();
  });

  it("applies the tighter of key and user limits and names the one that refused", async () => {
    clock.set(T0 + 20 * 60_000);
    const user = userSubject({ rpmLimit: 2, id: "alice" });
    const looseKey = keySubject({ rpmLimit: 10 });
    await limits.admitter.admit(request([looseKey, user]));
    await limits.admitter.admit(request([looseKey, user]));
    const byUser = await refusal(limits.admitter.admit(request([looseKey, user])));
    expect(byUser.message).toContain('user "alice" allows 2 requests per minute');

    const tightKey = keySubject({ rpmLimit: 1, alias: "tight" });
    const roomyUser = userSubject({ rpmLimit: 10 });
    await limits.admitter.admit(request([tightKey, roomyUser]));
    const byKey = await refusal(limits.admitter.admit(request([tightKey, roomyUser])));
    expect(byKey.message).toContain('key "tight" allows 1 requests per minute');
  });

  it("counts nothing on any subject when one subject refuses (all-or-nothing)", async () => {
    clock.set(T0 + 30 * 60_000);
    const key = keySubject({ rpmLimit: 5 });
    const user = userSubject({ rpmLimit: 1 });
    await limits.admitter.admit(request([key, user]));
    await refusal(limits.admitter.admit(request([key, user])));
    await refusal(limits.admitter.admit(request([key, user])));
    // Only the one admitted call counted on the key: 4 more fit.
    for (let i = 0; i < 4; i++) await limits.admitter.admit(request([key]));
    expect((await refusal(limits.admitter.admit(request([key])))).message).toContain("5 were used");
  });

  it("refuses a call whose estimate does not fit, naming the budget, its amount, the spend and the reset", async () => {
    clock.set(T0);
    const resetAt = Date.UTC(2026, 1, 1);
    const key = keySubject({
      maxBudget: 1,
      spend: 0.4,
      budgetDuration: "30d",
      budgetResetAt: resetAt,
      alias: "team",
    });
    const first = await limits.admitter.admit(request([key], 0.5));
    const error = await refusal(limits.admitter.admit(request([key], 0.2)));
    expect(error.status).toBe(429);
    expect(error.type).toBe("budget_exceeded");
    expect(error.headers["retry-after"]).toBeUndefined();
    expect(error.headers["x-should-retry"]).toBe("false");
    // Refused by the reservation in flight, not by settled spend alone: the budget is not exhausted.
    expect(error).toBeInstanceOf(BudgetRefusal);
    expect((error as BudgetRefusal).bySettledSpend).toBe(false);
    expect(error.message).toBe(
      'Budget has been exceeded! Key budget ("team"): $1.00, spend: $0.40 (+$0.50 reserved by calls in flight), ' +
        "resets at 2026-02-01T00:00:00Z. This call would reserve $0.20 (its prompt estimate plus max_tokens at " +
        "the model's price); a lower max_tokens lowers that.",
    );
    first.settle({ cost: 0.62, totalTokens: 10 });
    const spent = await refusal(limits.admitter.admit(request([key], 0)));
    expect((spent as BudgetRefusal).bySettledSpend).toBe(true);
    expect((spent as BudgetRefusal).subject.id).toBe(key.id);
    expect(spent.message).toBe(
      'Budget has been exceeded! Key budget ("team"): $1.00, spend: $1.02, resets at 2026-02-01T00:00:00Z. ' +
        "This call would reserve $0.00 (its prompt estimate plus max_tokens at the model's price); the budget is " +
        "used up, so no call fits until it resets or is raised.",
    );
  });

  it("names a user budget by user id and a lifetime budget as such", async () => {
    const user = userSubject({ id: "bob", maxBudget: 0.25, spend: 0.25 });
    const error = await refusal(limits.admitter.admit(request([keySubject({ maxBudget: 5 }), user], 0.01)));
    expect(error.message).toBe(
      'Budget has been exceeded! User budget ("bob"): $0.25, spend: $0.25, no reset (lifetime budget). ' +
        "This call would reserve $0.01 (its prompt estimate plus max_tokens at the model's price); the budget is " +
        "used up, so no call fits until it resets or is raised.",
    );
  });

  it("starts a fresh counter when the period rolls over (new budgetResetAt)", async () => {
    const key = keySubject({ maxBudget: 1, budgetDuration: "30d", budgetResetAt: Date.UTC(2026, 1, 1) });
    (await limits.admitter.admit(request([key], 0.9))).settle({ cost: 1, totalTokens: 1 });
    await refusal(limits.admitter.admit(request([key], 0.1)));
    const nextPeriod = { ...key, budgetResetAt: Date.UTC(2026, 2, 3), spend: 0 };
    await expect(limits.admitter.admit(request([nextPeriod], 0.9))).resolves.toBeDefined();
  });

  it("raises the counter to the database's spend when the database is ahead", async () => {
    const key = keySubject({ maxBudget: 1 });
    (await limits.admitter.admit(request([key], 0.1))).settle({ cost: 0.1, totalTokens: 1 });
    const dbAhead = { ...key, spend: 0.95 };
    const error = await refusal(limits.admitter.admit(request([dbAhead], 0.1)));
    expect(error.message).toContain("spend: $0.95");
  });

  it("release drops the reservation; extra settle/release calls are ignored", async () => {
    const key = keySubject({ maxBudget: 1 });
    const admission = await limits.admitter.admit(request([key], 0.6));
    await refusal(limits.admitter.admit(request([key], 0.6)));
    admission.release();
    admission.settle({ cost: 5, totalTokens: 5 });
    admission.release();
    const again = await limits.admitter.admit(request([key], 0.6));
    again.settle({ cost: 0.3, totalTokens: 1 });
    again.settle({ cost: 0.3, totalTokens: 1 });
    await expect(limits.admitter.admit(request([key], 0.7))).resolves.toBeDefined();
  });

  it("reclaims a reservation that was never settled after 10 minutes, and a late settle does not free it twice", async () => {
    clock.set(T0 + 3 * 3600_000);
    const key = keySubject({ maxBudget: 1 });
    const crashed = await limits.admitter.admit(request([key], 0.6));
    await refusal(limits.admitter.admit(request([key], 0.6)));
    clock.advance(10 * 60_000 - 1);
    await refusal(limits.admitter.admit(request([key], 0.6)));
    clock.advance(1);
    const live = await limits.admitter.admit(request([key], 0.6));
    crashed.settle({ cost: 0.1, totalTokens: 1 });
    // Live reservation 0.6 + spent 0.1: another 0.31 must not fit (it would if the late settle freed 0.6 again).
    const error = await refusal(limits.admitter.admit(request([key], 0.31)));
    expect(error.message).toContain("spend: $0.10 (+$0.60 reserved");
    live.release();
  });

  it("skips every counter for the master key and for unlimited subjects", async () => {
    const admission = await limits.admitter.admit(request([], 1000));
    admission.settle({ cost: 1000, totalTokens: 1 });
    await limits.admitter.admit(request([keySubject(), userSubject()], 1000));
    if (mode === "redis") {
      const redis = inspector();
      try {
        const before = await redis.keys(`${prefix}*`);
        expect(before.length).toBeGreaterThan(0); // the earlier tests' counters live in Redis
        await limits.admitter.admit(request([keySubject({ id: "unlimited" })], 5));
        expect((await redis.keys(`${prefix}*unlimited*`)).length).toBe(0);
        expect((await redis.keys(`${prefix}*`)).length).toBe(before.length);
      } finally {
        redis.disconnect();
      }
    }
  });
});
