/**
 * Micro-benchmark of the limits hot path: admit + settle for a virtual key and its user (rpm, tpm and budget on
 * both), shared through Redis and in process, side by side.
 *
 *   npx tsx bench/limits.ts [--calls 20000] [--concurrency 64]      (REDIS_URL, default redis://127.0.0.1:6379)
 *
 * Sequential: one call at a time, latency of admit (settle is fire-and-forget, as in the gateway).
 * Concurrent: `concurrency` loops, throughput of admit+settle.
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { createLimits, type Limits } from "../services/gateway/src/limits/index.js";
import type { AdmissionRequest, LimitSubject } from "../services/gateway/src/limits/types.js";
import { systemClock } from "../services/gateway/src/time/clock.js";
import { silentLogger } from "./lib/private-redis.js";

const { values } = parseArgs({
  options: { calls: { type: "string", default: "20000" }, concurrency: { type: "string", default: "64" } },
});
const calls = Number(values.calls);
const concurrency = Number(values.concurrency);
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `bench:limits:${randomBytes(4).toString("hex")}:`;

const silent = silentLogger;

const subject = (scope: "key" | "user", id: string): LimitSubject => ({
  scope,
  id,
  rpmLimit: 1e9,
  tpmLimit: 1e12,
  maxBudget: 1e6,
  budgetDuration: "30d",
  budgetResetAt: Date.now() + 30 * 86_400_000,
  spend: 0,
});
const call: AdmissionRequest = {
  subjects: [subject("key", randomBytes(32).toString("hex")), subject("user", "bench-user")],
  model: "general",
  estimatedCost: 0.002,
  estimatedTokens: 600,
};
const usage = { cost: 0.0015, totalTokens: 450 };

interface Result {
  p50: number;
  p99: number;
  sequentialPerSecond: number;
  concurrentPerSecond: number;
}

const percentile = (sorted: Float64Array, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

async function measure(limits: Limits): Promise<Result> {
  for (let i = 0; i < 2000; i++) (await limits.admitter.admit(call)).settle(usage); // warm-up
  const latencies = new Float64Array(calls);
  const sequentialStart = performance.now();
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    const admission = await limits.admitter.admit(call);
    latencies[i] = performance.now() - started;
    admission.settle(usage);
  }
  const sequentialMs = performance.now() - sequentialStart;
  latencies.sort();

  let remaining = calls;
  const concurrentStart = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (remaining-- > 0) (await limits.admitter.admit(call)).settle(usage);
    }),
  );
  const concurrentMs = performance.now() - concurrentStart;
  return {
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    sequentialPerSecond: calls / (sequentialMs / 1000),
    concurrentPerSecond: calls / (concurrentMs / 1000),
  };
}

async function cleanup(): Promise<void> {
  const redis = new Redis(redisUrl);
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== "0");
  redis.disconnect();
}

async function main(): Promise<void> {
  const results: Record<string, Result> = {};
  const inProcess = createLimits({ clock: systemClock, log: silent, registry: new Registry() });
  results["in-process"] = await measure(inProcess);
  await inProcess.close();

  const shared = createLimits({
    redisUrl,
    keyPrefix: prefix,
    clock: systemClock,
    log: silent,
    registry: new Registry(),
  });
  const deadline = Date.now() + 5000;
  while ((await shared.readiness()).status !== "connected") {
    if (Date.now() > deadline) throw new Error(`Redis at ${redisUrl} did not answer within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  try {
    results.redis = await measure(shared);
  } finally {
    await shared.close();
    await cleanup();
  }

  const ms = (v: number) => `${(v * 1000).toFixed(0)} µs`;
  console.log(`admit+settle, key + user with rpm, tpm and budget; ${calls} calls, Node ${process.version}`);
  console.log(`mode        admit p50   admit p99   sequential/s   concurrent(${concurrency})/s`);
  for (const [mode, r] of Object.entries(results)) {
    console.log(
      `${mode.padEnd(12)}${ms(r.p50).padStart(9)}${ms(r.p99).padStart(12)}${Math.round(r.sequentialPerSecond).toLocaleString("en").padStart(15)}${Math.round(r.concurrentPerSecond).toLocaleString("en").padStart(19)}`,
    );
  }
}

await main();
