/** Invalidation across gateway instances through Redis pub/sub, and in process without Redis. */
import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { LocalInvalidationBus } from "../../../../services/gateway/src/cache/local-bus.js";
import { RedisInvalidationBus } from "../../../../services/gateway/src/cache/redis-bus.js";
import type { InvalidationMessage } from "../../../../services/gateway/src/cache/types.js";
import { createLimits, type Limits } from "../../../../services/gateway/src/limits/index.js";
import {
  captureLogger,
  deleteKeys,
  ManualClock,
  REDIS_URL,
  uniquePrefix,
  waitFor,
} from "../../../helpers/redis.js";
import { startTcpProxy } from "../../../helpers/tcp-proxy.js";

const prefix = uniquePrefix("bus");

/** A key change message (the key's state after the change). */
function keyMessage(token: string, revokedAt: number | null = null): InvalidationMessage {
  return {
    kind: "key",
    key: {
      token,
      keyName: "sk-…abcd",
      keyAlias: null,
      userId: null,
      teamId: null,
      models: [],
      maxBudget: 1,
      budgetDuration: null,
      budgetResetAt: null,
      spend: 0,
      tpmLimit: null,
      rpmLimit: null,
      maxParallelRequests: null,
      metadata: {},
      expires: null,
      createdAt: 1,
      updatedAt: 2,
      revokedAt,
      blocked: false,
    },
  };
}

/** A user change message. */
function userMessage(userId: string): InvalidationMessage {
  return {
    kind: "user",
    user: {
      userId,
      userEmail: null,
      userRole: "internal_user",
      metadata: {},
      maxBudget: 5,
      budgetDuration: "30d",
      budgetResetAt: 3,
      spend: 0,
      tpmLimit: null,
      rpmLimit: null,
      maxParallelRequests: null,
      createdAt: 1,
      updatedAt: 2,
    },
  };
}

/** `key:<token>` / `user:<id>` / `team:<id>` / `member:<key>` / `deployment:<id>`: what a received message is about, for compact assertions. */
const about = (m: InvalidationMessage) =>
  m.kind === "key"
    ? `key:${m.key.token}`
    : m.kind === "user"
      ? `user:${m.user.userId}`
      : m.kind === "team"
        ? `team:${m.team.teamId}`
        : m.kind === "member"
          ? `member:${m.member.memberKey}`
          : `deployment:${m.deploymentId}`;
const open: Limits[] = [];

afterAll(async () => {
  await Promise.all(open.map((limits) => limits.close()));
  await deleteKeys(prefix);
});

/** A gateway instance's limits plus what its bus handler received. */
async function instance(url: string, keyPrefix = prefix, commandTimeoutMs?: number) {
  const limits = createLimits({
    redisUrl: url,
    keyPrefix,
    ...(commandTimeoutMs === undefined ? {} : { redisTimings: { commandTimeoutMs } }),
    clock: new ManualClock(0),
    log: captureLogger(),
    registry: new Registry(),
  });
  open.push(limits);
  const received: string[] = [];
  const messages: InvalidationMessage[] = [];
  limits.bus.subscribe((message) => {
    received.push(about(message));
    messages.push(message);
  });
  expect(limits.bus).toBeInstanceOf(RedisInvalidationBus);
  await (limits.bus as RedisInvalidationBus).ready();
  await waitFor("connected", async () => (await limits.readiness()).status === "connected");
  return { limits, received, messages };
}

describe("RedisInvalidationBus", () => {
  it("delivers key and user messages to every instance once, the publisher included, and nothing across prefixes", async () => {
    const a = await instance(REDIS_URL);
    const b = await instance(REDIS_URL);
    const other = await instance(REDIS_URL, uniquePrefix("bus-other"));
    const hash = "ab".repeat(32);

    await a.limits.bus.publish(keyMessage(hash));
    expect(a.received).toEqual([`key:${hash}`]);
    await waitFor("delivery to b", () => b.received.length === 1);
    expect(b.received).toEqual([`key:${hash}`]);

    await b.limits.bus.publish(userMessage("alice"));
    await waitFor("delivery to a", () => a.received.length === 2);
    expect(a.received).toEqual([`key:${hash}`, "user:alice"]);
    expect(b.received).toEqual([`key:${hash}`, "user:alice"]);
    expect(other.received).toEqual([]);
  });

  it("carries the new state itself, and ignores a malformed message", async () => {
    const a = await instance(REDIS_URL);
    const b = await instance(REDIS_URL);
    const token = "cd".repeat(32);
    const connection = new (await import("ioredis")).Redis(REDIS_URL);
    try {
      await connection.publish(`${prefix}invalidate`, "someone-else key:not-json");
      await connection.publish(`${prefix}invalidate`, 'someone-else {"kind":"key","key":{"token":1}}');
      await a.limits.bus.publish(keyMessage(token, 1_767_225_600_000));
      await waitFor("delivery to b", () => b.messages.length === 1);
      expect(b.messages[0]).toEqual(keyMessage(token, 1_767_225_600_000));
    } finally {
      connection.disconnect();
    }
  });

  it("while Redis is down, publish still resolves and reaches this instance; delivery resumes after", async () => {
    const proxy = await startTcpProxy(6379);
    try {
      const a = await instance(`redis://127.0.0.1:${proxy.port}`);
      const b = await instance(REDIS_URL);
      proxy.cut();
      await waitFor("a degraded", async () => (await a.limits.readiness()).status === "degraded");
      await expect(a.limits.bus.publish(keyMessage("lost"))).resolves.toBeUndefined();
      expect(a.received).toEqual(["key:lost"]);

      proxy.restore();
      await waitFor("a connected", async () => (await a.limits.readiness()).status === "connected", 10_000);
      // The subscriber reconnects on its own schedule: publish until b's message reaches a.
      await waitFor(
        "a resubscribed",
        async () => {
          await b.limits.bus.publish(keyMessage("after"));
          return a.received.includes("key:after");
        },
        10_000,
        100,
      );
      expect(b.received).not.toContain("key:lost");
    } finally {
      await proxy.close();
    }
  });
});

describe("RedisInvalidationBus delivery continuity", () => {
  it("says once every message published before has been delivered (caughtUp), for many callers at once", async () => {
    const a = await instance(REDIS_URL);
    const b = await instance(REDIS_URL);
    for (let i = 0; i < 100; i += 1) {
      const token = String(i).padStart(64, "e");
      await a.limits.bus.publish(keyMessage(token));
      // b may not have read the message yet; once caughtUp resolves, it has.
      expect(await b.limits.bus.caughtUp()).toBe(true);
      expect(b.received.at(-1)).toBe(`key:${token}`);
    }
    const token = "f".repeat(64);
    await a.limits.bus.publish(keyMessage(token));
    const answers = await Promise.all(Array.from({ length: 200 }, () => b.limits.bus.caughtUp()));
    expect(answers.every((ok) => ok)).toBe(true);
    expect(b.received.at(-1)).toBe(`key:${token}`);
    expect(b.received).toHaveLength(101);
  });

  it("dates its unbroken delivery from the last subscription: none while the link is down, a later one after", async () => {
    const proxy = await startTcpProxy(6379);
    try {
      const a = await instance(`redis://127.0.0.1:${proxy.port}`);
      const before = a.limits.bus.deliveringSince();
      expect(before).toBeDefined();
      expect(before).toBeLessThanOrEqual(performance.now());

      proxy.cut();
      await waitFor("the break to be seen", () => a.limits.bus.deliveringSince() === undefined);
      expect(await a.limits.bus.caughtUp()).toBe(false);
      proxy.restore();
      await waitFor("subscribed again", () => a.limits.bus.deliveringSince() !== undefined, 10_000);
      expect(a.limits.bus.deliveringSince()).toBeGreaterThan(before ?? Number.POSITIVE_INFINITY);
      expect(await a.limits.bus.caughtUp()).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it("ends the continuity when the subscriber link goes silent without closing, and resubscribes after", async () => {
    const proxy = await startTcpProxy(6379);
    try {
      const a = await instance(`redis://127.0.0.1:${proxy.port}`);
      const before = a.limits.bus.deliveringSince();
      proxy.stall(); // packets dropped: no FIN, no RST, no error
      await waitFor(
        "the silent link to be noticed",
        () => a.limits.bus.deliveringSince() === undefined,
        10_000,
      );
      proxy.restore();
      await waitFor("subscribed again", () => a.limits.bus.deliveringSince() !== undefined, 10_000);
      expect(a.limits.bus.deliveringSince()).toBeGreaterThan(before ?? Number.POSITIVE_INFINITY);
    } finally {
      await proxy.close();
    }
  });
});

describe("RedisInvalidationBus started while Redis is down", () => {
  it("a publish that times out on a link that is still up leaves the limits shared (a late reply is no outage)", async () => {
    const proxy = await startTcpProxy(6379);
    try {
      const a = await instance(`redis://127.0.0.1:${proxy.port}`, prefix, 100);
      proxy.stall();
      await a.limits.bus.publish(keyMessage("late"));
      proxy.restore();
      expect((await a.limits.readiness()).status).toBe("connected");
    } finally {
      await proxy.close();
    }
  });

  it("subscribes once Redis answers", async () => {
    const proxy = await startTcpProxy(6379);
    proxy.cut();
    try {
      const late = createLimits({
        redisUrl: `redis://127.0.0.1:${proxy.port}`,
        keyPrefix: prefix,
        clock: new ManualClock(0),
        log: captureLogger(),
        registry: new Registry(),
        redisTimings: { maxReconnectDelayMs: 100 },
      });
      open.push(late);
      const received: string[] = [];
      late.bus.subscribe((message) => received.push(about(message)));
      await new Promise((resolve) => setTimeout(resolve, 300)); // several failed connection attempts
      expect((await late.readiness()).status).toBe("degraded");
      proxy.restore();
      const b = await instance(REDIS_URL);
      await waitFor(
        "late instance subscribed",
        async () => {
          await b.limits.bus.publish(userMessage("late"));
          return received.includes("user:late");
        },
        10_000,
        100,
      );
    } finally {
      await proxy.close();
    }
  });
});

describe("LocalInvalidationBus", () => {
  it("calls every handler in process, even when one throws", async () => {
    const log = captureLogger();
    const bus = new LocalInvalidationBus(log);
    const received: string[] = [];
    bus.subscribe(() => {
      throw new Error("boom");
    });
    bus.subscribe((message) => received.push(about(message)));
    await bus.publish(keyMessage("x"));
    expect(received).toEqual(["key:x"]);
    expect(log.lines.some((l) => l.level === "warn" && l.msg === "invalidation handler failed")).toBe(true);
  });

  it("reaches every instance since its creation in the only gateway process, never in one of several workers", async () => {
    const createdAfter = performance.now();
    const sole = new LocalInvalidationBus().deliveringSince();
    expect(sole).toBeGreaterThanOrEqual(createdAfter);
    expect(sole).toBeLessThanOrEqual(performance.now());
    const worker = new LocalInvalidationBus(undefined, { soleInstance: false });
    expect(worker.deliveringSince()).toBeUndefined();
    // Caught up: the sole process always (publishing delivers at once); a worker never (siblings unheard).
    expect(await new LocalInvalidationBus().caughtUp()).toBe(true);
    expect(await worker.caughtUp()).toBe(false);
  });

  it("is the bus of a gateway without Redis", () => {
    const limits = createLimits({
      clock: new ManualClock(0),
      log: captureLogger(),
      registry: new Registry(),
    });
    expect(limits.bus).toBeInstanceOf(LocalInvalidationBus);
  });
});
