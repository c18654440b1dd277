/**
 * Redis outage: the machine's Redis keeps running (other suites use it); the gateway reaches it through a proxy
 * that the test cuts (connections refused) or stalls (connections open, replies held back).
 */
import net from "node:net";
import { Registry } from "prom-client";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createLimits, type Limits } from "../../../../services/gateway/src/limits/index.js";
import { metricValue } from "../../../helpers/metrics.js";
import {
  captureLogger,
  deleteKeys,
  inspector,
  ManualClock,
  uniquePrefix,
  waitFor,
} from "../../../helpers/redis.js";
import { startTcpProxy } from "../../../helpers/tcp-proxy.js";
import { keySubject, refusal, request, T0 } from "./subjects.js";

const PASSWORD = "hunter2-not-in-logs";
const prefix = uniquePrefix("limits-outage");
const clock = new ManualClock(T0 + 1_000);
const open: Limits[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((limits) => limits.close()));
});
afterAll(() => deleteKeys(prefix));

function start(port: number, password?: string, outageAfterMs = 250) {
  const registry = new Registry();
  const log = captureLogger();
  const limits = createLimits({
    redisUrl: `redis://${password === undefined ? "" : `:${password}@`}127.0.0.1:${port}`,
    keyPrefix: prefix,
    clock,
    log,
    registry,
    redisTimings: {
      commandTimeoutMs: 100,
      maxReconnectDelayMs: 200,
      probeIntervalMs: 100,
      healthProbeTimeoutMs: 300,
      outageAfterMs,
    },
  });
  open.push(limits);
  return { limits, registry, log };
}

/** `litellm_redis_fails` for one operation (probe PINGs count under `ping`). */
const failures = (registry: Registry, operation: string) =>
  metricValue(registry, "litellm_redis_fails", { operation });

const status = async (limits: Limits) => (await limits.readiness()).status;

describe("Redis outage", () => {
  it("cut: keeps admitting with per-instance limits, reports degraded, then returns to shared limits", async () => {
    const proxy = await startTcpProxy(6379);
    const redis = inspector();
    try {
      // A password Redis does not need (ioredis warns on stderr): it must never reach a log line.
      const { limits, registry, log } = start(proxy.port, PASSWORD);
      await waitFor("connected", async () => (await status(limits)) === "connected");
      expect(await metricValue(registry, "gateway_limits_shared")).toBe(1);

      const key = keySubject({ rpmLimit: 3 });
      await limits.admitter.admit(request([key]));
      // $0.60 of a $1 budget reserved in Redis by a call still in flight.
      const held = keySubject({ maxBudget: 1 });
      await limits.admitter.admit(request([held], 0.6));
      const rpmKey = `${prefix}key:${key.id}:rpm:${Math.floor(clock.now() / 60_000)}`;
      expect(await redis.get(rpmKey)).toBe("1");

      proxy.cut();
      await waitFor("degraded", async () => (await status(limits)) === "degraded", 5000);
      const readiness = await limits.readiness();
      expect(readiness.detail).toContain("limits are per instance");
      expect(readiness.detail).not.toContain(PASSWORD);
      expect(await metricValue(registry, "gateway_limits_shared")).toBe(0);

      // Per-instance counters, same rules, starting from what Redis last counted (1 of 3): never looser.
      for (let i = 0; i < 2; i++) await limits.admitter.admit(request([key]));
      const error = await refusal(limits.admitter.admit(request([key])));
      expect(error.status).toBe(429);
      expect(error.type).toBe("rate_limit_error");
      // The budget starts from what Redis last held for it: $0.60 reserved, so $0.50 more does not fit.
      expect((await refusal(limits.admitter.admit(request([held], 0.5)))).type).toBe("budget_exceeded");
      await limits.admitter.admit(request([held], 0.4));
      // Budgets start from the database's spend.
      const budgeted = keySubject({ maxBudget: 1, spend: 0.99 });
      expect((await refusal(limits.admitter.admit(request([budgeted], 0.02)))).type).toBe("budget_exceeded");
      expect(await redis.get(rpmKey)).toBe("1");

      proxy.restore();
      await waitFor("shared again", async () => (await status(limits)) === "connected", 5000);
      expect(await metricValue(registry, "gateway_limits_shared")).toBe(1);
      const fresh = keySubject({ rpmLimit: 3 });
      await limits.admitter.admit(request([fresh]));
      expect(await redis.get(`${prefix}key:${fresh.id}:rpm:${Math.floor(clock.now() / 60_000)}`)).toBe("1");

      const warnings = log.lines.filter((l) => l.level === "warn").map((l) => l.msg);
      expect(warnings).toContain("redis degraded: limits are per instance until it returns");
      expect(log.lines.map((l) => l.msg)).toContain("redis back: limits are shared again");
      for (const line of log.lines) expect(line.text).not.toContain(PASSWORD);
      expect(log.lines.some((l) => l.text.includes("redis://:***@127.0.0.1"))).toBe(true);
    } finally {
      redis.disconnect();
      await proxy.close();
    }
  });

  it("late: a reply later than the command timeout is no outage; the call is admitted through Redis", async () => {
    const stall = await startStallingProxy(6379);
    const redis = inspector();
    try {
      const { limits, registry } = start(stall.port);
      await waitFor("connected", async () => (await status(limits)) === "connected");
      const key = keySubject({ maxBudget: 1 });
      await limits.admitter.admit(request([key], 0.1));

      // Redis answers 150 ms late: after the 100 ms command timeout, within the 300 ms health probe.
      stall.hold(true);
      const late = setTimeout(() => stall.hold(false), 150);
      const admission = await limits.admitter.admit(request([key], 0.2));
      clearTimeout(late);
      expect(await status(limits)).toBe("connected");
      expect(await failures(registry, "admit")).toBe(1);
      // Counted once in Redis: the timed-out try's reservation was released, the retry's is held.
      const budget = `${prefix}key:${key.id}:budget:lifetime`;
      await waitFor("release applied", async () => (await redis.hget(budget, "reserved")) === "300000");
      admission.release();
      // Returned without keeping a slice (flush), only the first call's reservation stays held.
      await limits.flush();
      await waitFor("released", async () => (await redis.hget(budget, "reserved")) === "100000");
    } finally {
      redis.disconnect();
      await stall.close();
    }
  });

  it("stall not yet established as an outage: the call is refused with a retryable 503, not admitted", async () => {
    const stall = await startStallingProxy(6379);
    try {
      const { limits, registry } = start(stall.port, undefined, 60_000);
      await waitFor("connected", async () => (await status(limits)) === "connected");
      const key = keySubject({ maxBudget: 1 });
      await limits.admitter.admit(request([key], 0.1));

      stall.hold(true);
      const error = await refusal(limits.admitter.admit(request([key], 0.1)));
      expect(error.status).toBe(503);
      expect(error.code).toBe("limits_unavailable");
      expect(error.headers["retry-after"]).toBe("1");
      expect(await status(limits)).toBe("connected");
      expect(await failures(registry, "admit")).toBe(1);
    } finally {
      stall.hold(false);
      await stall.close();
    }
  });

  it("stall: a call that gets no reply, nor its patient retry, on a link silent past outageAfterMs is admitted in process; later calls do not wait", async () => {
    const stall = await startStallingProxy(6379);
    try {
      const { limits, registry } = start(stall.port);
      await waitFor("connected", async () => (await status(limits)) === "connected");
      const key = keySubject({ rpmLimit: 100 });
      await limits.admitter.admit(request([key]));

      stall.hold(true);
      await expect(limits.admitter.admit(request([key]))).resolves.toBeDefined();
      expect(await status(limits)).toBe("degraded");
      expect(await failures(registry, "admit")).toBe(1);
      // While degraded the hot path does not touch Redis: no further admit waits on it or fails on it.
      for (let i = 0; i < 5; i++) await limits.admitter.admit(request([key]));
      expect(await failures(registry, "admit")).toBe(1);

      stall.hold(false);
      await waitFor("probe finds Redis answering", async () => (await status(limits)) === "connected", 5000);
    } finally {
      await stall.close();
    }
  });
});

/** A proxy whose replies can be held back (the link stays open but Redis seems to hang). */
async function startStallingProxy(targetPort: number) {
  let held = false;
  const sockets = new Set<net.Socket>();
  const flushers = new Set<() => void>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, "127.0.0.1");
    sockets.add(client).add(upstream);
    const pending: Buffer[] = [];
    const flush = () => {
      for (const chunk of pending.splice(0)) client.write(chunk);
    };
    flushers.add(flush);
    upstream.on("data", (chunk: Buffer) => (held ? pending.push(chunk) : client.write(chunk)));
    client.on("data", (chunk: Buffer) => upstream.write(chunk));
    const drop = () => {
      client.destroy();
      upstream.destroy();
      flushers.delete(flush);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    hold(value: boolean) {
      held = value;
      if (!value) for (const flush of flushers) flush();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
