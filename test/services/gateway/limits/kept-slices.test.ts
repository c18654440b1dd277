/**
 * Slices kept between calls (docs/leases.md, "Keys used less often than a lease lives"), two instances sharing
 * Redis: a key used less often than a lease lives keeps one call's slice, so its next call within 60 s takes no
 * lease call; the slice is renewed in the batched sweep (after a call, at a window's rollover), given back after
 * 60 s idle or on a change message, and a dead instance's kept slices stop counting after their lifetime.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Limits } from "../../../../services/gateway/src/limits/index.js";
import { RedisAdmitter } from "../../../../services/gateway/src/limits/redis-admitter.js";
import type { LimitSubject } from "../../../../services/gateway/src/limits/types.js";
import { openCountedLimits } from "../../../helpers/limits.js";
import { deleteKeys, inspector, ManualClock, uniquePrefix, waitFor } from "../../../helpers/redis.js";
import { keySubject, refusal, request, T0 } from "./subjects.js";

/** How long a dead instance's kept slice can stay counted after its key's last call there, ms (85 s). */
const KEPT_SLICE_LIFETIME_MS = 85_000;
const WINDOW_MS = 60_000;

const open: Limits[] = [];
const prefixes: string[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((limits) => limits.close()));
  await Promise.all(prefixes.splice(0).map((prefix) => deleteKeys(prefix)));
});

/** An instance on `prefix` and the number of lease calls it made for admissions (`litellm_redis_latency`). */
async function instance(clock: ManualClock, prefix: string) {
  const counted = await openCountedLimits(clock, prefix);
  open.push(counted.limits);
  return counted;
}

/** Two instances on one fresh prefix. */
async function pair(clock: ManualClock) {
  const prefix = uniquePrefix("limits-kept");
  prefixes.push(prefix);
  return { a: await instance(clock, prefix), b: await instance(clock, prefix), prefix };
}

function book(limits: Limits) {
  if (!(limits.admitter instanceof RedisAdmitter)) throw new Error("not shared limits");
  return limits.admitter.book;
}

/**
 * Waits until `limits`' sweep has dealt with every lease used since it last ran: each is gone or holds only
 * what its last lease call gave it (nothing used, spent or reserved since).
 */
function swept(limits: Limits): Promise<void> {
  return waitFor("sweep", () =>
    [...book(limits).leases.values()].every(
      (lease) =>
        lease.busy === undefined &&
        lease.requestsUsed === 0 &&
        lease.tokensUsed === 0 &&
        lease.spent === 0 &&
        lease.reserved <= 0,
    ),
  );
}

async function budgetHash(prefix: string, subject: LimitSubject) {
  const redis = inspector();
  try {
    const [spent, reserved] = await redis.hmget(
      `${prefix}key:${subject.id}:budget:lifetime`,
      "spent",
      "reserved",
    );
    return { spent: Number(spent ?? 0), reserved: Number(reserved ?? 0) };
  } finally {
    redis.disconnect();
  }
}

async function rpmCounter(prefix: string, subject: LimitSubject, window: number): Promise<number> {
  const redis = inspector();
  try {
    return Number((await redis.get(`${prefix}key:${subject.id}:rpm:${window}`)) ?? 0);
  } finally {
    redis.disconnect();
  }
}

/** Admits on `limits` until refused; the number admitted (each settled at its estimate). */
async function admitUntilRefused(limits: Limits, subject: LimitSubject, estimate = 0): Promise<number> {
  let admitted = 0;
  for (;;) {
    try {
      (await limits.admitter.admit(request([subject], estimate))).settle({ cost: estimate, totalTokens: 10 });
      admitted++;
    } catch {
      return admitted;
    }
  }
}

/** One call on `limits`, settled at half its estimate, then the idle time and the sweep that renews its slice. */
async function callAndSweep(clock: ManualClock, limits: Limits, subject: LimitSubject, estimate: number) {
  (await limits.admitter.admit(request([subject], estimate))).settle({ cost: estimate / 2, totalTokens: 50 });
  clock.advance(1_500);
  await swept(limits);
}

describe("slices kept between calls", () => {
  it("a rarely used key's second call within 60 s takes no lease call", async () => {
    const clock = new ManualClock(T0 + 70 * WINDOW_MS + 1_000);
    const { a, prefix } = await pair(clock);
    const key = keySubject({ rpmLimit: 100, tpmLimit: 100_000, maxBudget: 10 });
    const before = await a.leaseCalls();
    await callAndSweep(clock, a.limits, key, 0.01);
    expect((await a.leaseCalls()) - before).toBe(1);
    clock.advance(30_000);
    (await a.limits.admitter.admit(request([key], 0.01))).settle({ cost: 0.005, totalTokens: 50 });
    expect((await a.leaseCalls()) - before).toBe(1);
    await a.limits.flush();
    expect(await budgetHash(prefix, key)).toEqual({ spent: 10_000, reserved: 0 });
    expect(await rpmCounter(prefix, key, T0 / WINDOW_MS + 70)).toBe(2);
  });

  it("an idle kept slice is given back after 60 s", async () => {
    const clock = new ManualClock(T0 + 72 * WINDOW_MS + 1_000);
    const { a, prefix } = await pair(clock);
    const key = keySubject({ rpmLimit: 100, maxBudget: 10 });
    await callAndSweep(clock, a.limits, key, 0.01);
    clock.advance(30_000);
    await swept(a.limits);
    // One call's slice held: one request and the call's estimate.
    expect(await budgetHash(prefix, key)).toEqual({ spent: 5_000, reserved: 10_000 });
    expect(await rpmCounter(prefix, key, T0 / WINDOW_MS + 72)).toBe(2);
    clock.advance(30_000);
    await waitFor("slice returned", async () => (await budgetHash(prefix, key)).reserved === 0);
    await waitFor("lease forgotten", () => book(a.limits).leases.size === 0);
  });

  it("a dead instance's kept slices stop counting after their lifetime", async () => {
    const clock = new ManualClock(T0 + 74 * WINDOW_MS + 1_000);
    const { a, b, prefix } = await pair(clock);
    const budgetKey = keySubject({ maxBudget: 1 });
    const rpmKey = keySubject({ rpmLimit: 8 });
    await callAndSweep(clock, a.limits, budgetKey, 0.1);
    await callAndSweep(clock, a.limits, rpmKey, 0);
    const lastCall = clock.now() - 1_500;
    await a.limits.close({ returnLeases: false });

    // spent 0.05 + a's kept 0.1: 0.9 does not fit until the slice's lifetime is over.
    await refusal(b.limits.admitter.admit(request([budgetKey], 0.9)));
    // a used one request and keeps one: 6 left in this window; the window's end frees the kept one.
    expect(await admitUntilRefused(b.limits, rpmKey)).toBe(6);
    clock.set(lastCall + KEPT_SLICE_LIFETIME_MS);
    (await b.limits.admitter.admit(request([budgetKey], 0.9))).release();
    expect(await admitUntilRefused(b.limits, rpmKey)).toBe(8);
    await b.limits.flush();
    expect(await budgetHash(prefix, budgetKey)).toEqual({ spent: 50_000, reserved: 0 });
  });

  it("many keys each near its budget over two instances never spend past it, mostly without lease calls", async () => {
    const clock = new ManualClock(T0 + 80 * WINDOW_MS + 1_000);
    const { a, b, prefix } = await pair(clock);
    const keys = Array.from({ length: 100 }, () => keySubject({ maxBudget: 0.1 }));
    const admitted = new Map<LimitSubject, number>();
    let calls = 0;
    const leaseCalls = async () => (await a.leaseCalls()) + (await b.leaseCalls());
    const before = await leaseCalls();
    for (let round = 0; round < 12; round++) {
      await Promise.all(
        keys.map(async (key, i) => {
          calls++;
          const on = (i + round) % 3 === 0 ? b : a;
          try {
            const admission = await on.limits.admitter.admit(request([key], 0.01));
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
            admission.settle({ cost: 0.01, totalTokens: 10 });
            admitted.set(key, (admitted.get(key) ?? 0) + 1);
          } catch (error) {
            expect((error as { type?: string }).type).toBe("budget_exceeded");
          }
        }),
      );
      clock.advance(1_500);
      await Promise.all([swept(a.limits), swept(b.limits)]);
    }
    await Promise.all([a.limits.flush(), b.limits.flush()]);
    for (const key of keys) {
      expect(admitted.get(key) ?? 0).toBeLessThanOrEqual(10);
      expect(admitted.get(key) ?? 0).toBeGreaterThanOrEqual(8);
      expect(await budgetHash(prefix, key)).toEqual({
        spent: (admitted.get(key) ?? 0) * 10_000,
        reserved: 0,
      });
    }
    // Kept slices answer many calls locally; near each budget's end the calls go to Redis again.
    expect((await leaseCalls()) - before).toBeLessThan(calls * 0.8);
  });

  it("rpm stays exact across a window's rollover: kept requests are renewed for the new window", async () => {
    const clock = new ManualClock(T0 + 90 * WINDOW_MS + 50_000);
    const { a, b, prefix } = await pair(clock);
    const key = keySubject({ rpmLimit: 8 });
    await callAndSweep(clock, a.limits, key, 0);
    await callAndSweep(clock, b.limits, key, 0);
    clock.set(T0 + 91 * WINDOW_MS + 1_000);
    const renewed = (limits: Limits) =>
      waitFor(
        "renewed for the new window",
        () => book(limits).leases.get(`key:${key.id}`)?.window === T0 / WINDOW_MS + 91,
      );
    await Promise.all([renewed(a.limits), renewed(b.limits)]);
    const before = (await a.leaseCalls()) + (await b.leaseCalls());
    for (const limits of [a.limits, b.limits]) (await limits.admitter.admit(request([key]))).release();
    // Each instance's first call in the new window came from its renewed slice.
    expect((await a.leaseCalls()) + (await b.leaseCalls())).toBe(before);
    let total = 2;
    for (let quiet = 0; quiet < 2; ) {
      const more = (await admitUntilRefused(a.limits, key)) + (await admitUntilRefused(b.limits, key));
      total += more;
      quiet = more === 0 ? quiet + 1 : 0;
    }
    expect(total).toBe(8);
    await Promise.all([a.limits.flush(), b.limits.flush()]);
    expect(await rpmCounter(prefix, key, T0 / WINDOW_MS + 91)).toBe(8);
    expect(await rpmCounter(prefix, key, T0 / WINDOW_MS + 90)).toBeLessThanOrEqual(8);
  });

  it("a change message drops the kept slice at once", async () => {
    const clock = new ManualClock(T0 + 95 * WINDOW_MS + 1_000);
    const { a, b, prefix } = await pair(clock);
    const key = keySubject({ maxBudget: 10 });
    await callAndSweep(clock, a.limits, key, 0.1);
    expect((await budgetHash(prefix, key)).reserved).toBe(100_000);
    const record = { token: key.id, updatedAt: clock.now(), revokedAt: clock.now(), models: [] };
    await b.limits.bus.publish({ kind: "key", key: record } as never);
    await waitFor(
      "a returned its kept slice",
      async () => (await budgetHash(prefix, key)).reserved === 0,
      2000,
    );
    expect(book(a.limits).leases.get(`key:${key.id}`)?.held ?? 0).toBe(0);
  });
});
