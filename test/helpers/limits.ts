/**
 * A gateway instance's limits for the suites that exercise them, with a fresh metrics registry and captured
 * logs: shared through the machine's Redis (see `redis.ts`), or in process.
 */
import { Registry } from "prom-client";
import { afterAll, beforeAll } from "vitest";
import { createLimits, type Limits, type LimitsOptions } from "../../services/gateway/src/limits/index.js";
import type { Clock } from "../../services/gateway/src/time/clock.js";
import { captureLogger, deleteKeys, REDIS_URL, uniquePrefix, waitFor } from "./redis.js";

/**
 * Opens `Limits` on {@link REDIS_URL} under `keyPrefix` and resolves once its connection reports `connected`
 * (closed again if it never does); without a prefix, in-process limits (no Redis). `redisTimings` as in
 * {@link LimitsOptions}; `registry` receives its metrics (default a fresh one).
 */
export async function openLimits(
  clock: Clock,
  keyPrefix?: string,
  redisTimings?: LimitsOptions["redisTimings"],
  registry: Registry = new Registry(),
): Promise<Limits> {
  const limits = createLimits({
    ...(keyPrefix === undefined ? {} : { redisUrl: REDIS_URL, keyPrefix }),
    ...(redisTimings === undefined ? {} : { redisTimings }),
    clock,
    log: captureLogger(),
    registry,
  });
  if (keyPrefix === undefined) return limits;
  try {
    await waitFor("redis connected", async () => (await limits.readiness()).status === "connected");
  } catch (error) {
    await limits.close();
    throw error;
  }
  return limits;
}

/**
 * {@link openLimits} on Redis under `keyPrefix`, with `leaseCalls()`: the lease calls it has made for admissions
 * so far (the count of `litellm_redis_latency{operation="admit"}`).
 */
export async function openCountedLimits(
  clock: Clock,
  keyPrefix: string,
): Promise<{ limits: Limits; leaseCalls(): Promise<number> }> {
  const registry = new Registry();
  const limits = await openLimits(clock, keyPrefix, undefined, registry);
  const leaseCalls = async () =>
    ((await registry.getSingleMetric("litellm_redis_latency")?.get())?.values ?? [])
      .filter((v) => (v as { metricName?: string }).metricName === "litellm_redis_latency_count")
      .filter((v) => v.labels.operation === "admit")
      .reduce((sum, v) => sum + v.value, 0);
  return { limits, leaseCalls };
}

/**
 * For a suite that runs its checks both over Redis and in process: opens two instances' `Limits` sharing Redis
 * under a fresh prefix from `name`, and one in-process `Limits`, before the suite (closed and the keys deleted
 * after it). The arrays are filled once the suite's `beforeAll` has run; `prefix` is the shared one's.
 */
export function limitsPerMode(
  clock: Clock,
  name: string,
): { shared: Limits[]; local: Limits[]; prefix: string } {
  const prefix = uniquePrefix(name);
  const opened = { shared: [] as Limits[], local: [] as Limits[], prefix };
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) opened.shared.push(await openLimits(clock, prefix));
    opened.local.push(await openLimits(clock));
  });
  afterAll(async () => {
    await Promise.all([...opened.shared, ...opened.local].map((limits) => limits.close()));
    await deleteKeys(prefix);
  });
  return opened;
}
