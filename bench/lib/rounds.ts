/**
 * The measured rounds of `npm run bench`: open-loop fixed-rate runs (with each gateway's GC pauses) and
 * closed-loop saturation runs (with every process's CPU and the Redis commands), each target once per round, in
 * an order that rotates from round to round so that no target always runs right after another.
 */
import { type CpuMeter, startCpu } from "./cpu.js";
import { gcBetween, readGcTotals } from "./gc.js";
import {
  cannon,
  type LoadResult,
  mergeRounds,
  type PacedResult,
  type PacedRow,
  pacedLoad,
  type Target,
} from "./load.js";
import { type CommandCounter, commandsBetween } from "./redis-commands.js";
import type { BenchResults } from "./results.js";
import { median } from "./stats.js";

/** The targets in a different order each round. */
export const rotated = (targets: Target[], round: number): Target[] =>
  targets.map((_, i) => targets[(i + round) % targets.length]!);

/**
 * `rounds` × `rates` × targets of {@link pacedLoad}, merged over rounds per (rate, target), and the GC pauses of
 * the targets named in `gateways` (read from their /metrics around each run, summed per rate).
 */
export async function pacedRounds(
  targets: Target[],
  gateways: Set<string>,
  o: { rates: number[]; rounds: number; duration: number; say(line: string): void },
): Promise<{ paced: PacedRow[]; gc: BenchResults["gc"] }> {
  const runs = new Map<string, PacedResult[]>();
  const gc = new Map<string, BenchResults["gc"][number]>();
  for (let round = 0; round < o.rounds; round++) {
    for (const rate of o.rates) {
      for (const target of rotated(targets, round)) {
        o.say(`${target.name}: ${rate} req/s open loop, ${o.duration} s (round ${round + 1}/${o.rounds})`);
        const key = `${rate} ${target.name}`;
        const isGateway = gateways.has(target.name);
        const gcBefore = isGateway ? await readGcTotals(target.origin) : undefined;
        const result = await pacedLoad(target, { rate, seconds: o.duration });
        runs.set(key, [...(runs.get(key) ?? []), result]);
        if (gcBefore !== undefined) {
          const pauses = gcBetween(gcBefore, await readGcTotals(target.origin));
          const sum = gc.get(key) ?? { target: target.name, rate, seconds: 0, kinds: {} };
          sum.seconds += result.seconds;
          for (const [kind, v] of Object.entries(pauses)) {
            const k = sum.kinds[kind] ?? { count: 0, ms: 0 };
            sum.kinds[kind] = { count: k.count + v.count, ms: k.ms + v.ms };
          }
          gc.set(key, sum);
        }
      }
    }
  }
  const paced = o.rates.flatMap((rate) =>
    targets.map((t) => mergeRounds(runs.get(`${rate} ${t.name}`) ?? [])),
  );
  return { paced, gc: [...gc.values()] };
}

/** The median req/s of several rounds and the round closest to it. @throws on an empty list. */
export function medianRun(list: LoadResult[]): { rps: number; middle: LoadResult } {
  if (list.length === 0) throw new Error("medianRun: no rounds");
  const rps = median(list.map((r) => r.rps));
  const middle = list.reduce(
    (best, r) => (Math.abs(r.rps - rps) < Math.abs(best.rps - rps) ? r : best),
    list[0]!,
  );
  return { rps, middle };
}

/**
 * `rounds` × targets of saturation ({@link cannon} with `connections`), with every meter's CPU and, when
 * `commands` is given, the Redis commands sent during each target's runs. The saturation row of a target is the
 * median req/s of its rounds, with the latency of the round closest to that median.
 */
export async function saturationRounds(
  targets: Target[],
  meters: CpuMeter[],
  commands: CommandCounter | undefined,
  o: { rounds: number; seconds: number; connections: number; say(line: string): void },
): Promise<{ saturation: BenchResults["saturation"]; cpu: BenchResults["cpu"] }> {
  const runs = new Map<string, LoadResult[]>();
  const used = new Map<string, BenchResults["cpu"][number]>();
  for (let round = 0; round < o.rounds; round++) {
    for (const target of rotated(targets, round)) {
      o.say(
        `${target.name}: saturation, ${o.connections} connections, ${o.seconds} s (round ${round + 1}/${o.rounds})`,
      );
      const countsBefore = await commands?.read();
      const stopCpu = await startCpu(meters);
      const result = await cannon(target, { seconds: o.seconds, connections: o.connections });
      const ms = await stopCpu();
      const countsAfter = await commands?.read();
      runs.set(target.name, [...(runs.get(target.name) ?? []), result]);
      const sum = used.get(target.name) ?? { target: target.name, requests: 0, ms: {} };
      sum.requests += result.ok + result.non2xx;
      for (const [name, v] of Object.entries(ms)) sum.ms[name] = (sum.ms[name] ?? 0) + v;
      if (countsBefore !== undefined && countsAfter !== undefined) {
        const redis = sum.redis ?? {};
        sum.redis = redis;
        for (const [name, calls] of Object.entries(commandsBetween(countsBefore, countsAfter))) {
          redis[name] = (redis[name] ?? 0) + calls;
        }
      }
      used.set(target.name, sum);
    }
  }
  const cpu = targets.map((t) => used.get(t.name) ?? { target: t.name, requests: 0, ms: {} });
  const saturation = targets.map((t) => {
    const list = runs.get(t.name) ?? [];
    const { rps, middle } = medianRun(list);
    return {
      target: t.name,
      rounds: list.map((r) => r.rps),
      rps,
      errors: list.reduce((n, r) => n + r.errors + r.non2xx, 0),
      latency: middle.latency,
    };
  });
  return { saturation, cpu };
}
