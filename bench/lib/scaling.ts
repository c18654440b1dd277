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

/** A gateway started for the workers part; `stop` ends it. */
export interface WorkersGateway {
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
  startWorkers(workers: number): Promise<WorkersGateway>;
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

async function longStreams(
  deps: ScalingDeps,
  s: ScalingSettings,
): Promise<NonNullable<ScalingResults["longStreams"]>> {
  const rows: LongStreamRow[] = [];
  for (const target of [deps.upstream, deps.passthrough, ...deps.full.map((g) => g.target)]) {
    deps.say(
      `scaling: ${target.name}, ${s.longStreams} streams of ${s.longStreamChunks} chunks, ${s.longStreamConcurrency} at a time`,
    );
    const body = longStreamBody(target.model, s.longStreamChunks);
    const pool = new Pool(target.origin, { connections: s.longStreamConcurrency, keepAliveTimeout: 60_000 });
    const ttft: number[] = [];
    const total: number[] = [];
    let failures = 0;
    const stop = await startCpu(deps.meters);
    for (let left = s.longStreams; left > 0; left -= s.longStreamConcurrency) {
      const wave = Math.min(left, s.longStreamConcurrency);
      for (const r of await Promise.all(Array.from({ length: wave }, () => timeStream(pool, target, body)))) {
        if (r === undefined) failures++;
        else {
          ttft.push(r.ttft);
          total.push(r.total);
        }
      }
    }
    const cpuMs = await stop();
    await pool.close();
    tally(target, s.longStreams - failures);
    rows.push({
      target: target.name,
      ttft: summarize(ttft),
      total: summarize(total),
      failures,
      streams: s.longStreams,
      cpuMs,
    });
  }
  return { chunks: s.longStreamChunks, concurrency: s.longStreamConcurrency, rows };
}

async function workers(deps: ScalingDeps, s: ScalingSettings): Promise<WorkersRow[]> {
  const started: Array<{ gateway: WorkersGateway; workers: number; processes: number; meter: CpuMeter }> = [];
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
 * Runs the scaling parts the settings ask for, in order: sizes, long streams, distinct keys, workers. Long streams
 * come before the distinct keys: a gateway left holding 100,000 keys' state spends CPU on it for a while (V8's
 * memory-reducing major GCs over the bigger heap, up to a minute and more later; `bench/many-keys-idle.ts`), which
 * the streams' per-process CPU would otherwise count as theirs.
 */
export async function runScaling(deps: ScalingDeps, s: ScalingSettings): Promise<ScalingResults> {
  const out: ScalingResults = { settings: s, sizes: [], keys: [], workers: [] };
  if (s.promptSizes.length > 0) out.sizes = await sizes(deps, s);
  if (s.longStreams > 0) out.longStreams = await longStreams(deps, s);
  if (s.keyCounts.length > 0 && deps.full.length > 0) out.keys = await distinctKeys(deps, s);
  if (s.workers.length > 0 && deps.full.length > 0) out.workers = await workers(deps, s);
  return out;
}
