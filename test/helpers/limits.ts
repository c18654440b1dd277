/**
 * A gateway instance's limits for the suites that exercise them, with a fresh metrics registry and captured
 * logs: shared through the machine's Redis (see `redis.ts`), or in process.
 */
import { Registry } from "prom-client";
import { createLimits, type Limits, type LimitsOptions } from "../../services/gateway/src/limits/index.js";
import type { Clock } from "../../services/gateway/src/time/clock.js";
import { captureLogger, REDIS_URL, waitFor } from "./redis.js";

/**
 * Opens `Limits` on {@link REDIS_URL} under `keyPrefix` and resolves once its connection reports `connected`
 * (closed again if it never does); without a prefix, in-process limits (no Redis). `redisTimings` as in
 * {@link LimitsOptions}.
 */
export async function openLimits(
  clock: Clock,
  keyPrefix?: string,
  redisTimings?: LimitsOptions["redisTimings"],
): Promise<Limits> {
  const limits = createLimits({
    ...(keyPrefix === undefined ? {} : { redisUrl: REDIS_URL, keyPrefix }),
    ...(redisTimings === undefined ? {} : { redisTimings }),
    clock,
    log: captureLogger(),
    registry: new Registry(),
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
