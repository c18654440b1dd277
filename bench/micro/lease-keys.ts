/**
 * Micro-benchmark of the shared limits (docs/leases.md) with one key against many: this process's CPU per
 * admit + settle at a fixed rate, round robin over `--keys` virtual keys (rpm, tpm and budget each), and the
 * Redis commands per call (`INFO commandstats`; REDIS_URL, default redis://127.0.0.1:6379, so other clients'
 * commands count too on a shared Redis). Before each run of many keys, the keys it will use get one call each
 * and a 6 s pause (as `bench/many-keys-cpu.ts` does), so what is measured is a key used again after more than a
 * lease lifetime (5 s) but within the 60 s a slice is kept between calls, not a first use.
 *
 *   npx tsx bench/micro/lease-keys.ts [--keys 100000] [--rate 2000] [--seconds 5] [--rounds 3] [--before <dir>]
 *
 * `--before <dir>`: another checkout of this repository (e.g. `main`); its limits run in this same process on
 * their own key prefix, in the same rounds, and are reported beside this checkout's.
 */
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { createLimits, type Limits } from "../../services/gateway/src/limits/index.js";
import type { AdmissionRequest, LimitSubject } from "../../services/gateway/src/limits/types.js";
import { systemClock } from "../../services/gateway/src/time/clock.js";
import { silentLogger } from "../lib/private-redis.js";
import { commandsBetween, parseCommandStats } from "../lib/redis-commands.js";
import { median } from "../lib/stats.js";

const { values } = parseArgs({
  options: {
    keys: { type: "string", default: "100000" },
    rate: { type: "string", default: "2000" },
    seconds: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    before: { type: "string" },
  },
});
const keyCount = Number(values.keys);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `bench:lease-keys:${randomBytes(4).toString("hex")}:`;
const silent = silentLogger;

const subject = (id: string): LimitSubject => ({
  scope: "key",
  id,
  rpmLimit: 100_000_000,
  tpmLimit: 1e12,
  maxBudget: 1e6,
  budgetDuration: "30d",
  budgetResetAt: Date.now() + 30 * 86_400_000,
  spend: 0,
});
const calls: AdmissionRequest[] = Array.from({ length: keyCount }, () => ({
  subjects: [subject(randomBytes(32).toString("hex"))],
  model: "bench",
  estimatedCost: 0,
  estimatedTokens: 30,
}));
const usage = { cost: 0, totalTokens: 25 };

const open = async (label: string, create: typeof createLimits) => {
  const limits = create({
    redisUrl,
    keyPrefix: `${prefix}${label}:`,
    clock: systemClock,
    log: silent,
    registry: new Registry(),
  });
  while ((await limits.readiness()).status !== "connected") await sleep(20);
  return { label, limits };
};
const variants: Array<{ label: string; limits: Limits }> = [await open("after", createLimits)];
if (values.before !== undefined) {
  const entry = join(resolve(values.before), "services/gateway/src/limits/index.ts");
  const before = (await import(entry)) as { createLimits: typeof createLimits };
  variants.push(await open("before", before.createLimits));
}
const redis = new Redis(redisUrl);

/** Paced admit + settle over the first `n` keys; CPU µs and Redis commands per call, over the run and 2 s after. */
async function run(limits: Limits, n: number, cursor: { at: number }) {
  const total = Math.round(rate * seconds);
  if (n > 1) {
    for (let i = 0; i < total; i += 500) {
      const batch = Array.from(
        { length: Math.min(500, total - i) },
        (_, j) => calls[(cursor.at + i + j) % n]!,
      );
      await Promise.all(batch.map(async (call) => (await limits.admitter.admit(call)).settle(usage)));
    }
    await sleep(6000);
  }
  const before = parseCommandStats(await redis.info("commandstats"));
  const cpu = process.cpuUsage();
  const start = performance.now();
  let done = 0;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const call = calls[cursor.at++ % n]!;
    void limits.admitter.admit(call).then((admission) => {
      setImmediate(() => admission.settle(usage));
      done++;
    });
  }
  while (done < total) await sleep(5);
  await sleep(2000);
  const used = process.cpuUsage(cpu);
  const commands = commandsBetween(before, parseCommandStats(await redis.info("commandstats")));
  delete commands.info;
  const count = Object.values(commands).reduce((s, v) => s + v, 0);
  return {
    cpuUs: (used.user + used.system) / total,
    commands: count / total,
    scripts: (commands.evalsha ?? 0) / total,
  };
}

const results = new Map<string, Array<{ cpuUs: number; commands: number; scripts: number }>>();
const cursors = new Map<string, { at: number }>();
for (const v of variants) await run(v.limits, Math.min(keyCount, 5000), { at: 0 }); // warm-up
for (let round = 0; round < Number(values.rounds); round++) {
  for (const v of round % 2 === 0 ? variants : [...variants].reverse()) {
    for (const n of round % 2 === 0 ? [1, keyCount] : [keyCount, 1]) {
      const name = `${v.label} ${n}`;
      const cursor = cursors.get(name) ?? { at: 0 };
      cursors.set(name, cursor);
      const r = await run(v.limits, n, cursor);
      results.set(name, [...(results.get(name) ?? []), r]);
      console.error(
        `round ${round + 1}, ${name} keys: ${r.cpuUs.toFixed(1)} µs CPU/call, ${r.commands.toFixed(3)} commands/call`,
      );
    }
  }
}
for (const v of variants) {
  const one = median(results.get(`${v.label} 1`)!.map((r) => r.cpuUs));
  for (const n of [1, keyCount]) {
    const list = results.get(`${v.label} ${n}`)!;
    const cpu = median(list.map((r) => r.cpuUs));
    console.log(
      `${v.label}, ${n} keys: ${cpu.toFixed(1)} µs CPU per admit+settle (${(cpu / one).toFixed(2)}× 1 key), ${median(list.map((r) => r.commands)).toFixed(3)} Redis commands per call (${median(list.map((r) => r.scripts)).toFixed(3)} script calls)`,
    );
  }
}
for (const v of variants) await v.limits.close();
let c = "0";
do {
  const [next, keys] = await redis.scan(c, "MATCH", `${prefix}*`, "COUNT", 1000);
  c = next;
  if (keys.length > 0) await redis.del(...keys);
} while (c !== "0");
redis.disconnect();
