/**
 * How the gateway's cost grows (the scaling tables of `npm run bench`): against the request's size, the number of
 * distinct keys in use, a stream's length and the number of worker processes. Each part runs the full-pipeline
 * gateways (after, and the before with `--baseline`) beside the upstream and the pass-through proxy as baselines,
 * one target at a time in a rotating order, and returns the measurements; scaling-report.ts renders them.
 */
import { performance } from "node:perf_hooks";
import { Pool } from "undici";
import { treeMemoryKiB } from "./children.js";
import { type CpuMeter, descendants, processMeter, startCpu } from "./cpu.js";
import { sizeLabel } from "./format.js";
import { cannon, type LoadResult, pacedLoad, type Target, tally, timeStream } from "./load.js";
import { heapUsedBytes, insertKeyCopies, warmKeys } from "./many-keys.js";
import type {
  KeyStep,
  LongStreamRow,
  ScaleRow,
  ScalingResults,
  ScalingSettings,
  SizeStep,
  WorkersRow,
} from "./results.js";
import { medianRun, rotated } from "./rounds.js";
import { summarize } from "./stats.js";

/** A full-pipeline gateway the scaling parts load. */
export interface FullGateway {
  target: Target;
  pid: number;
  databaseUrl: string;
  /** Its virtual key (plaintext), the template of the copies of the distinct-keys part. */
  key: string;
}

/** A gateway process started for one part (workers, long streams); `stop` ends it. */
export interface StartedGateway {
  target: Target;
  pid: number;
  stop(): Promise<void>;
}

export interface ScalingDeps {
  upstream: Target;
  passthrough: Target;
  /** The full-pipeline gateways: the after first, then the before (if any). */
  full: FullGateway[];
  /** Every process's CPU meter, named as the targets are (plus Redis, Postgres, load generator). */
  meters: CpuMeter[];
  say(line: string): void;
  /** Starts the after gateway, same database and Redis, with GATEWAY_WORKERS=`workers`. */
  startWorkers(workers: number): Promise<StartedGateway>;
  /**
   * Starts a new process of the full-pipeline gateway `g` (its build, database, Redis and key), for the long
   * streams (see {@link runScaling}); `stop` ends it. Without it the long streams load the gateways that ran
   * every earlier part.
   */
  startFresh?(g: FullGateway): Promise<StartedGateway>;
}

/** Saturation connections for a body of `bytes`: fewer for big bodies, so the run measures the gateway, not queues. */
export function connectionsFor(bytes: number, max: number): number {
  return Math.min(max, bytes < 10_000 ? max : bytes < 500_000 ? 8 : 2);
}

/** The fixed rate for a body of `bytes`: `rate`, but at most about 20 MB/s of request bodies (and at least 10/s). */
export function rateFor(bytes: number, rate: number): number {
  return Math.min(rate, Math.max(10, Math.round(20e6 / bytes)));
}

/** A chat request whose prompt holds `bytes` characters of text (in a system message; the reply stays short). */
export function promptBody(model: string, bytes: number): string {
  const text = "lorem ipsum dolor sit amet ".repeat(Math.ceil(bytes / 27)).slice(0, bytes);
  return JSON.stringify({
    model,
    messages: [
      { role: "system", content: text },
      { role: "user", content: "hello bench" },
    ],
    max_tokens: 16,
  });
}

/**
 * A streamed request the fake upstream answers with `chunks` content chunks: it echoes the last user message as
 * "You said: …", one chunk per word, so the message holds `chunks − 2` words.
 */
export function longStreamBody(model: string, chunks: number): string {
  return JSON.stringify({
    model,
    messages: [
      { role: "user", content: Array.from({ length: Math.max(1, chunks - 2) }, () => "w").join(" ") },
    ],
    stream: true,
    stream_options: { include_usage: true },
  });
}

/**
 * Saturation (with CPU) then, if `rate` > 0, a fixed-rate run, for each target in turn, starting at the `round`-th
 * of `order` (rotating); the rows come back in `order`.
 */
async function step(
  deps: ScalingDeps,
  order: Target[],
  o: {
    round: number;
    seconds: number;
    connections: number;
    rate: number;
    body?: (t: Target) => string;
    label: string;
  },
): Promise<ScaleRow[]> {
  const rows: ScaleRow[] = [];
  for (const target of rotated(order, o.round)) {
    const body = o.body?.(target);
    deps.say(
      `scaling ${o.label}: ${target.name}, saturation ${o.connections} connections, then ${o.rate} req/s`,
    );
    const stop = await startCpu(deps.meters);
    const saturation = await cannon(target, {
      seconds: o.seconds,
      connections: o.connections,
      ...(body === undefined ? {} : { body }),
    });
    const ms = await stop();
    const paced =
      o.rate > 0
        ? await pacedLoad(target, {
            rate: o.rate,
            seconds: o.seconds,
            ...(body === undefined ? {} : { body }),
          })
        : undefined;
    rows.push({
      target: target.name,
      saturation,
      ...(paced === undefined ? {} : { paced }),
      cpu: { requests: saturation.ok + saturation.non2xx, ms },
    });
  }
  return order.map((t) => rows.find((r) => r.target === t.name)!);
}

async function sizes(deps: ScalingDeps, s: ScalingSettings): Promise<SizeStep[]> {
  const targets = [deps.upstream, deps.passthrough, ...deps.full.map((g) => g.target)];
  const out: SizeStep[] = [];
  for (const [i, bytes] of s.promptSizes.entries()) {
    const connections = connectionsFor(bytes, s.connections);
    const rate = rateFor(bytes, s.rate);
    const bodies = new Map(targets.map((t) => [t.name, promptBody(t.model, bytes)]));
    const rows = await step(deps, targets, {
      round: i,
      seconds: s.seconds,
      connections,
      rate,
      body: (t) => bodies.get(t.name)!,
      label: `${sizeLabel(bytes)} prompts`,
    });
    out.push({ bytes, connections, rate, rows });
  }
  return out;
}

async function distinctKeys(deps: ScalingDeps, s: ScalingSettings): Promise<KeyStep[]> {
  const keys = new Map(deps.full.map((g) => [g.target.name, [g.key]]));
  /**
   * Memory of a gateway as the lowest of the readings taken every 100 ms over 3 s of light load (100 req/s on its
   * own key): the live set right after a collection, as near as the outside can see it without forcing a GC.
   */
  const memory = async (g: FullGateway) => {
    let rssKiB = Number.POSITIVE_INFINITY;
    let heapBytes = Number.POSITIVE_INFINITY;
    const load = pacedLoad(g.target, { rate: 100, seconds: 3 });
    const until = performance.now() + 3000;
    while (performance.now() < until) {
      rssKiB = Math.min(rssKiB, treeMemoryKiB(g.pid).rss);
      heapBytes = Math.min(heapBytes, await heapUsedBytes(g.target.origin));
      await new Promise((r) => setTimeout(r, 100));
    }
    await load;
    return { target: g.target.name, rssKiB, heapBytes };
  };
  const out: KeyStep[] = [];
  for (const [i, n] of [...s.keyCounts].sort((a, b) => a - b).entries()) {
    for (const g of deps.full) {
      const have = keys.get(g.target.name)!;
      if (have.length < n) {
        const began = performance.now();
        deps.say(`scaling keys: ${g.target.name}, inserting ${n - have.length} keys and warming them`);
        const added = await insertKeyCopies(g.databaseUrl, g.key, n - have.length);
        await warmKeys(g.target.origin, added);
        have.push(...added);
        tally(g.target, added.length);
        deps.say(
          `scaling keys: ${g.target.name} has ${have.length} keys (${((performance.now() - began) / 1000).toFixed(0)} s)`,
        );
      }
    }
    const mem = [];
    for (const g of deps.full) mem.push(await memory(g));
    const targets = [
      deps.upstream,
      deps.passthrough,
      ...deps.full.map((g) => ({ ...g.target, tokens: keys.get(g.target.name)!.slice(0, n) })),
    ];
    const rows = await step(deps, targets, {
      round: i,
      seconds: s.seconds,
      connections: s.connections,
      rate: s.rate,
      label: `${n} key${n === 1 ? "" : "s"}`,
    });
    out.push({ keys: n, rows, memory: mem });
  }
  return out;
}

/**
 * The long streams: one unmeasured wave per target (its warm-up), then waves of `s.longStreamConcurrency` streams,
 * the targets in a rotating order wave by wave, so that each sees the machine's load alike; each wave's CPU goes to
 * its target. With {@link ScalingDeps.startFresh}, the full-pipeline gateways are new processes started for this
 * part (same name, so the rows read as theirs) and stopped after it: the CPU counted is then the streams' own, not
 * the collection of what earlier parts left on the heap (see {@link runScaling}).
 */
async function longStreams(
  deps: ScalingDeps,
  s: ScalingSettings,
): Promise<NonNullable<ScalingResults["longStreams"]>> {
  const fresh: StartedGateway[] = [];
  try {
    for (const g of deps.startFresh === undefined ? [] : deps.full) {
      deps.say(`scaling: starting a new ${g.target.name} process for the long streams`);
      fresh.push(await deps.startFresh!(g));
    }
    const full = fresh.length > 0 ? fresh : deps.full;
    // A fresh process's meter replaces the long-running one's of the same name.
    const meters = [
      ...deps.meters.filter((m) => !full.some((g) => g.target.name === m.name)),
      ...fresh.map((g) => processMeter(g.target.name, g.pid)),
    ];
    const targets = [deps.upstream, deps.passthrough, ...full.map((g) => g.target)];
    const runs = targets.map((target) => ({
      target,
      body: longStreamBody(target.model, s.longStreamChunks),
      pool: new Pool(target.origin, { connections: s.longStreamConcurrency, keepAliveTimeout: 60_000 }),
      ttft: [] as number[],
      total: [] as number[],
      failures: 0,
      cpuMs: {} as Record<string, number>,
    }));
    const wave = async (run: (typeof runs)[number], streams: number) => {
      const results = await Promise.all(
        Array.from({ length: streams }, () => timeStream(run.pool, run.target, run.body)),
      );
      tally(run.target, results.filter((r) => r !== undefined).length);
      return results;
    };
    deps.say(`scaling: long streams, warming up ${targets.map((t) => t.name).join(", ")}`);
    for (const run of runs) await wave(run, s.longStreamConcurrency);
    const waves = Math.ceil(s.longStreams / s.longStreamConcurrency);
    for (let w = 0; w < waves; w++) {
      const streams = Math.min(s.longStreamConcurrency, s.longStreams - w * s.longStreamConcurrency);
      deps.say(
        `scaling: long streams, wave ${w + 1}/${waves}: ${streams} streams of ${s.longStreamChunks} chunks per target`,
      );
      for (const target of rotated(targets, w)) {
        const run = runs.find((r) => r.target === target)!;
        const stop = await startCpu(meters);
        for (const r of await wave(run, streams)) {
          if (r === undefined) run.failures++;
          else {
            run.ttft.push(r.ttft);
            run.total.push(r.total);
          }
        }
        for (const [name, ms] of Object.entries(await stop())) run.cpuMs[name] = (run.cpuMs[name] ?? 0) + ms;
      }
    }
    await Promise.all(runs.map((r) => r.pool.close()));
    const rows: LongStreamRow[] = runs.map((r) => ({
      target: r.target.name,
      ttft: summarize(r.ttft),
      total: summarize(r.total),
      failures: r.failures,
      streams: s.longStreams,
      cpuMs: r.cpuMs,
    }));
    return { chunks: s.longStreamChunks, concurrency: s.longStreamConcurrency, rows };
  } finally {
    for (const g of fresh) await g.stop();
  }
}

async function workers(deps: ScalingDeps, s: ScalingSettings): Promise<WorkersRow[]> {
  const started: Array<{ gateway: StartedGateway; workers: number; processes: number; meter: CpuMeter }> = [];
  try {
    for (const n of s.workers) {
      deps.say(`scaling workers: starting the full-pipeline gateway with GATEWAY_WORKERS=${n}`);
      const gateway = await deps.startWorkers(n);
      // The warm-up also lets a gateway that forks its workers lazily start them before they are counted.
      await cannon(gateway.target, { seconds: 2, connections: 16 });
      const meter = processMeter(gateway.target.name, gateway.pid);
      started.push({ gateway, workers: n, processes: 1 + descendants(gateway.pid).length, meter });
    }
    const targets = [deps.passthrough, ...started.map((w) => w.gateway.target)];
    const runs = new Map<string, LoadResult[]>();
    const cpu = new Map<string, { requests: number; ms: number }>();
    for (let round = 0; round < s.rounds; round++) {
      for (const target of rotated(targets, round)) {
        deps.say(
          `scaling workers: ${target.name}, saturation ${s.connections} connections (round ${round + 1}/${s.rounds})`,
        );
        const meter = started.find((w) => w.gateway.target.name === target.name)?.meter;
        const stop = meter === undefined ? undefined : await startCpu([meter]);
        const result = await cannon(target, { seconds: s.seconds, connections: s.connections });
        runs.set(target.name, [...(runs.get(target.name) ?? []), result]);
        if (stop !== undefined) {
          const used = Object.values(await stop())[0] ?? Number.NaN;
          const sum = cpu.get(target.name) ?? { requests: 0, ms: 0 };
          cpu.set(target.name, { requests: sum.requests + result.ok + result.non2xx, ms: sum.ms + used });
        }
      }
    }
    return targets.map((t) => {
      const results = runs.get(t.name) ?? [];
      const { rps, middle } = medianRun(results);
      const w = started.find((x) => x.gateway.target.name === t.name);
      return {
        target: t.name,
        workers: w?.workers ?? 0,
        processes: w?.processes ?? 1,
        rounds: results.map((r) => r.rps),
        rps,
        latency: middle.latency,
        cpu: cpu.get(t.name) ?? { requests: 0, ms: Number.NaN },
      };
    });
  } finally {
    for (const w of started) await w.gateway.stop();
  }
}

/**
 * Runs the scaling parts the settings ask for, in order: sizes, long streams, distinct keys, workers. A gateway
 * that ran an earlier part pays for it later: the 1 MB prompts' garbage, and 100,000 keys' state (V8's
 * memory-reducing major GCs over the bigger heap, up to a minute and more later; `bench/many-keys-idle.ts`), would
 * count in the long streams' per-process CPU. So the long streams run on new gateway processes
 * ({@link ScalingDeps.startFresh}) and before the distinct keys.
 */
export async function runScaling(deps: ScalingDeps, s: ScalingSettings): Promise<ScalingResults> {
  const out: ScalingResults = { settings: s, sizes: [], keys: [], workers: [] };
  if (s.promptSizes.length > 0) out.sizes = await sizes(deps, s);
  if (s.longStreams > 0) out.longStreams = await longStreams(deps, s);
  if (s.keyCounts.length > 0 && deps.full.length > 0) out.keys = await distinctKeys(deps, s);
  if (s.workers.length > 0 && deps.full.length > 0) out.workers = await workers(deps, s);
  return out;
}
