/**
 * Lease-based limits (docs/leases.md) with two instances sharing Redis: slices are returned when idle, on a
 * change message and at shutdown, expire when their holder dies, and never let the instances together pass a
 * limit.
 */
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import type { GatewayError } from "../../../../services/gateway/src/errors/gateway-error.js";
import { createLimits, type Limits } from "../../../../services/gateway/src/limits/index.js";
import { LEASE_HOLD_MS, LEASE_TTL_MS } from "../../../../services/gateway/src/limits/lease.js";
import { RedisAdmitter } from "../../../../services/gateway/src/limits/redis-admitter.js";
import type { Admission } from "../../../../services/gateway/src/limits/types.js";
import type { UserRecord } from "../../../../services/gateway/src/users/records.js";
import { openCountedLimits, openLimits } from "../../../helpers/limits.js";
import {
  captureLogger,
  deleteKeys,
  inspector,
  ManualClock,
  uniquePrefix,
  waitFor,
} from "../../../helpers/redis.js";
import { startTcpProxy } from "../../../helpers/tcp-proxy.js";
import { keySubject, refusal, request, T0, userSubject } from "./subjects.js";

const open: Limits[] = [];
const prefixes: string[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((limits) => limits.close()));
  await Promise.all(prefixes.splice(0).map((prefix) => deleteKeys(prefix)));
});

/** Two instances on one fresh prefix. */
async function pair(
  clock: ManualClock,
  leaseIdleMs?: number,
): Promise<{ a: Limits; b: Limits; prefix: string }> {
  const prefix = uniquePrefix("limits-leases");
  prefixes.push(prefix);
  const timings = leaseIdleMs === undefined ? undefined : { leaseIdleMs };
  const a = await openLimits(clock, prefix, timings);
  open.push(a);
  const b = await openLimits(clock, prefix, timings);
  open.push(b);
  return { a, b, prefix };
}

/** Admits on `limits` until refused; the number admitted (each released). */
async function admitUntilRefused(limits: Limits, subjects: Parameters<typeof request>[0], estimate = 0) {
  let admitted = 0;
  for (;;) {
    try {
      (await limits.admitter.admit(request(subjects, estimate))).release();
      admitted++;
    } catch {
      return admitted;
    }
  }
}

/** Micro-USD of the budget slice `limits` holds on key `keyId`. */
function heldBy(limits: Limits, keyId: string): number {
  if (!(limits.admitter instanceof RedisAdmitter)) throw new Error("not shared limits");
  return limits.admitter.book.leases.get(`key:${keyId}`)?.held ?? 0;
}

async function budgetHash(prefix: string, counterId: string, period = "lifetime") {
  const redis = inspector();
  try {
    const [spent, reserved] = await redis.hmget(
      `${prefix}${counterId}:budget:${period}`,
      "spent",
      "reserved",
    );
    return { spent: Number(spent ?? 0), reserved: Number(reserved ?? 0) };
  } finally {
    redis.disconnect();
  }
}

/** Shared limits on a fresh prefix, and the number of lease calls (admissions through Redis) they made. */
async function countedLimits(clock: ManualClock) {
  const prefix = uniquePrefix("limits-leases");
  prefixes.push(prefix);
  const counted = await openCountedLimits(clock, prefix);
  open.push(counted.limits);
  return counted;
}

describe("leases across two instances", () => {
  it("rpm is exact: a slice left unused on one instance returns when idle, and the window admits exactly the limit", async () => {
    const clock = new ManualClock(T0 + 2_000);
    const { a, b, prefix } = await pair(clock);
    const key = keySubject({ rpmLimit: 20 });
    for (let i = 0; i < 3; i++) (await a.admitter.admit(request([key]))).release();
    let onB = await admitUntilRefused(b, [key]);
    // a holds the unused part of its slice: b is refused early, never late.
    expect(3 + onB).toBeLessThanOrEqual(20);
    await waitFor("a's idle slice returned and taken by b", async () => {
      onB += await admitUntilRefused(b, [key]);
      return 3 + onB === 20;
    });
    await refusal(a.admitter.admit(request([key])));
    await refusal(b.admitter.admit(request([key])));
    const redis = inspector();
    try {
      expect(await redis.get(`${prefix}key:${key.id}:rpm:${Math.floor(clock.now() / 60_000)}`)).toBe("20");
    } finally {
      redis.disconnect();
    }
  });

  it("1,000 concurrent calls over both instances never spend past a small budget", async () => {
    const clock = new ManualClock(T0 + 5 * 60_000);
    const { a, b, prefix } = await pair(clock);
    const key = keySubject({ maxBudget: 0.5 });
    const user = userSubject({ maxBudget: 100 });
    let settledMicros = 0;
    const call = async (i: number) => {
      let admission: Admission;
      try {
        admission = await (i % 2 === 0 ? a : b).admitter.admit(request([key, user], 0.01));
      } catch (error) {
        expect((error as GatewayError).type).toBe("budget_exceeded");
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
      // Real cost between half the estimate and the estimate.
      const cost = Math.round(10_000 * (0.5 + Math.random() / 2)) / 1e6;
      settledMicros += Math.round(cost * 1e6);
      admission.settle({ cost, totalTokens: 1 });
      return true;
    };
    const outcomes = await Promise.all(Array.from({ length: 1000 }, (_, i) => call(i)));
    expect(outcomes.filter(Boolean).length).toBeGreaterThanOrEqual(50);
    expect(settledMicros).toBeLessThanOrEqual(500_000);
    await Promise.all([a.flush(), b.flush()]);
    expect(await budgetHash(prefix, `key:${key.id}`)).toEqual({ spent: settledMicros, reserved: 0 });
    expect(await budgetHash(prefix, `user:${user.id}`)).toEqual({ spent: settledMicros, reserved: 0 });
  });

  it("a change message for a user makes the other instance return its slice of that user, and a lowered budget refuses on both", async () => {
    const clock = new ManualClock(T0 + 10 * 60_000);
    // Idle return far away: only the message can bring the slice back within the bound.
    const { a, b, prefix } = await pair(clock, 60_000);
    const user = userSubject({ maxBudget: 10 });
    for (let i = 0; i < 3; i++) (await b.admitter.admit(request([user], 0.1))).release();
    expect((await budgetHash(prefix, `user:${user.id}`)).reserved).toBeGreaterThan(0);

    const lowered = { ...user, maxBudget: 0.05 };
    await a.bus.publish({
      kind: "user",
      user: { userId: user.id, updatedAt: clock.now(), maxBudget: 0.05 } as unknown as UserRecord,
    });
    await waitFor(
      "b returned its slice",
      async () => (await budgetHash(prefix, `user:${user.id}`)).reserved === 0,
      2000,
    );
    for (const limits of [a, b]) {
      expect((await refusal(limits.admitter.admit(request([lowered], 0.1)))).type).toBe("budget_exceeded");
    }
  });

  it("an instance that dies holding slices frees them by expiry: the other instance gets the allowance back", async () => {
    const clock = new ManualClock(T0 + 20 * 60_000);
    const { a, b, prefix } = await pair(clock, 60_000);
    const key = keySubject({ maxBudget: 1 });
    for (let i = 0; i < 4; i++) (await a.admitter.admit(request([key], 0.1))).release();
    const held = (await budgetHash(prefix, `key:${key.id}`)).reserved;
    expect(held).toBeGreaterThan(0);
    await a.close({ returnLeases: false });

    // Everything but a's slice fits; the whole budget does not while the slice lives.
    (await b.admitter.admit(request([key], 1 - held / 1e6))).release();
    await b.flush();
    await refusal(b.admitter.admit(request([key], 1)));
    clock.advance(LEASE_HOLD_MS);
    (await b.admitter.admit(request([key], 1))).release();
  });

  it("an instance stalled past its lease's lifetime keeps its call's money held: the other cannot admit it again", async () => {
    const clock = new ManualClock(T0 + 20 * 60_000);
    const prefix = uniquePrefix("limits-leases");
    prefixes.push(prefix);
    // a's sweep never runs: its event loop is stalled (a starved CPU) past the lease's 5 s.
    const a = await openLimits(clock, prefix, { leaseIdleMs: 60_000, leaseSweepIntervalMs: 3_600_000 });
    open.push(a);
    const b = await openLimits(clock, prefix, { leaseIdleMs: 60_000 });
    open.push(b);
    const key = keySubject({ maxBudget: 1 });
    const inFlight = await a.admitter.admit(request([key], 0.6));
    clock.advance(LEASE_TTL_MS + 1000);
    await refusal(b.admitter.admit(request([key], 0.6)));
    inFlight.settle({ cost: 0.6, totalTokens: 10 });
    await a.flush();
    expect((await budgetHash(prefix, `key:${key.id}`)).spent).toBe(600_000);
  });

  it("close() returns every slice: what was spent is settled and nothing stays held", async () => {
    const clock = new ManualClock(T0 + 30 * 60_000);
    const { a, prefix } = await pair(clock, 60_000);
    const key = keySubject({ maxBudget: 1, rpmLimit: 100, tpmLimit: 10_000 });
    for (let i = 0; i < 5; i++)
      (await a.admitter.admit(request([key], 0.01))).settle({ cost: 0.002, totalTokens: 7 });
    await a.close();
    expect(await budgetHash(prefix, `key:${key.id}`)).toEqual({ spent: 10_000, reserved: 0 });
    const redis = inspector();
    try {
      const index = Math.floor(clock.now() / 60_000);
      expect(await redis.get(`${prefix}key:${key.id}:rpm:${index}`)).toBe("5");
      expect(await redis.get(`${prefix}key:${key.id}:tpm:${index}`)).toBe("35");
    } finally {
      redis.disconnect();
    }
  });

  it("Redis gone: an instance spends its own slice, then falls back counting every open slice as spent", async () => {
    const clock = new ManualClock(T0 + 40 * 60_000);
    const proxy = await startTcpProxy(6379);
    try {
      const { a: direct, prefix } = await pair(clock, 60_000);
      const cut = createLimits({
        redisUrl: `redis://127.0.0.1:${proxy.port}`,
        keyPrefix: prefix,
        clock,
        log: captureLogger(),
        registry: new Registry(),
        redisTimings: {
          commandTimeoutMs: 100,
          maxReconnectDelayMs: 200,
          probeIntervalMs: 100,
          leaseIdleMs: 60_000,
        },
      });
      open.push(cut);
      await waitFor("connected", async () => (await cut.readiness()).status === "connected");
      const key = keySubject({ maxBudget: 1 });
      for (let i = 0; i < 3; i++) (await direct.admitter.admit(request([key], 0.1))).release();
      for (let i = 0; i < 2; i++) (await cut.admitter.admit(request([key], 0.1))).release();
      const heldByDirect = heldBy(direct, key.id);
      expect(heldByDirect).toBeGreaterThan(0);
      expect(heldBy(cut, key.id)).toBeGreaterThan(0);

      proxy.cut();
      await waitFor("degraded", async () => (await cut.readiness()).status === "degraded");
      // Calls held open: the cut instance admits from its slice, then from the fallback seeded with spent plus
      // every open slice (its own and the direct instance's), so never into what the direct instance holds.
      let admitted = 0;
      for (;;) {
        try {
          await cut.admitter.admit(request([key], 0.1));
          admitted++;
        } catch (error) {
          expect((error as GatewayError).type).toBe("budget_exceeded");
          break;
        }
      }
      expect(admitted * 100_000).toBeLessThanOrEqual(1_000_000 - heldByDirect);
      expect(admitted).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });

  it("calls that the slices cover take no Redis round trip: 50 calls take a few lease calls, with or without an estimate", async () => {
    const clock = new ManualClock(T0 + 50 * 60_000);
    const { limits, leaseCalls } = await countedLimits(clock);
    for (const estimate of [0, 0.001]) {
      const before = await leaseCalls();
      const key = keySubject({ rpmLimit: 1000, tpmLimit: 1_000_000, maxBudget: 10 });
      const user = userSubject({ maxBudget: 10 });
      for (let i = 0; i < 50; i++) {
        (await limits.admitter.admit(request([key, user], estimate))).settle({
          cost: estimate,
          totalTokens: 10,
        });
      }
      expect(await leaseCalls()).toBeGreaterThan(before);
      expect((await leaseCalls()) - before).toBeLessThan(10);
    }
  });

  it("calls waiting for a lease call that Redis refused get the same refusal, not one more round trip each", async () => {
    const clock = new ManualClock(T0 + 55 * 60_000);
    const { limits, leaseCalls } = await countedLimits(clock);
    const key = keySubject({ maxBudget: 0.01, spend: 0.01 });
    const before = await leaseCalls();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 100 }, () => limits.admitter.admit(request([key], 0.001))),
    );
    for (const outcome of outcomes) {
      expect(outcome.status).toBe("rejected");
      expect(((outcome as PromiseRejectedResult).reason as GatewayError).type).toBe("budget_exceeded");
    }
    expect((await leaseCalls()) - before).toBeLessThan(10);
  });
});
