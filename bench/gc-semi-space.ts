/**
 * V8's young generation size for the gateway: two full-pipeline gateways of this checkout (virtual key,
 * Postgres, Redis, bench/gateway.yaml), one with `--max-semi-space-size=<MiB>` and one without, under the same
 * fixed rate in alternating rounds of one run. Reports per gateway the scavenges and mark-compacts per minute
 * and their pauses (prom-client's `nodejs_gc_duration_seconds`, bench/lib/gc.ts), latency percentiles and CPU
 * per request.
 *
 *   npm run build -w services/gateway
 *   npx tsx bench/gc-semi-space.ts [--sizes 16,32] [--rate 1000] [--seconds 15] [--rounds 3]
 *
 * Needs the local Postgres (`--postgres`) and Redis (`--redis`).
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { readyLine, repoRoot, type Service, spawnService } from "./lib/children.js";
import { processMeter, startCpu } from "./lib/cpu.js";
import { type BenchDatabase, startFullPipelineGateway } from "./lib/full-pipeline.js";
import { gcBetween, readGcTotals } from "./lib/gc.js";
import { pacedLoad, type Target } from "./lib/load.js";
import { median } from "./lib/stats.js";

const { values: flags } = parseArgs({
  options: {
    sizes: { type: "string", default: "16,32" },
    rate: { type: "string", default: "1000" },
    seconds: { type: "string", default: "15" },
    rounds: { type: "string", default: "3" },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
    redis: { type: "string", default: "redis://127.0.0.1:6379" },
  },
});
const rate = Number(flags.rate);
const seconds = Number(flags.seconds);
const masterKey = `sk-bench-master-${randomBytes(8).toString("hex")}`;
const upstreamKey = "sk-bench-upstream-key";
const say = (line: string) =>
  process.stderr.write(`gc [${new Date().toISOString().slice(11, 19)}]: ${line}\n`);
const services: Service[] = [];
const databases: BenchDatabase[] = [];

interface Row {
  p50: number[];
  p99: number[];
  cpuUs: number[];
  scavenges: number[];
  scavengeMs: number[];
  markCompacts: number[];
  markCompactMs: number[];
}

try {
  const upstream = spawnService("upstream", {
    entry: "bench/upstream.ts",
    env: { ...process.env, BENCH_UPSTREAM_API_KEY: upstreamKey },
  });
  services.push(upstream);
  const upstreamUrl = (await readyLine<{ ready: true; url: string }>(upstream)).url;
  const variants = [0, ...String(flags.sizes).split(",").map(Number)];
  const targets: Array<{ label: string; target: Target; pid: number }> = [];
  for (const size of variants) {
    const label = size === 0 ? "default" : `--max-semi-space-size=${size}`;
    const { service, origin, database, key } = await startFullPipelineGateway(
      label,
      { port: 0, masterKey, upstreamUrl, upstreamKey, redisKeyPrefix: `gc-${process.pid}-${size}:` },
      { adminUrl: String(flags.postgres), databasePrefix: "gcsemi", redisUrl: String(flags.redis) },
      { checkout: repoRoot, nodeFlags: size === 0 ? [] : [`--max-semi-space-size=${size}`] },
    );
    databases.push(database);
    services.push(service);
    const target: Target = {
      name: label,
      origin,
      path: "/v1/chat/completions",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      model: "bench",
    };
    await pacedLoad(target, { rate, seconds: 3 }); // warm-up: JIT, key cache, leases
    targets.push({ label, target, pid: service.pid });
  }
  const rows = new Map<string, Row>();
  for (let round = 0; round < Number(flags.rounds); round++) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
    for (const { label, target, pid } of order) {
      const gcBefore = await readGcTotals(target.origin);
      const stop = await startCpu([processMeter(label, pid)]);
      const run = await pacedLoad(target, { rate, seconds });
      const cpu = (await stop())[label]!;
      const gc = gcBetween(gcBefore, await readGcTotals(target.origin));
      const minutes = run.seconds / 60;
      const row = rows.get(label) ?? {
        p50: [],
        p99: [],
        cpuUs: [],
        scavenges: [],
        scavengeMs: [],
        markCompacts: [],
        markCompactMs: [],
      };
      rows.set(label, row);
      const minor = gc.minor ?? { count: 0, ms: 0 };
      const major = gc.major ?? { count: 0, ms: 0 };
      row.p50.push(run.latency.p50);
      row.p99.push(run.latency.p99);
      row.cpuUs.push((cpu * 1000) / (run.ok + run.non2xx));
      row.scavenges.push(minor.count / minutes);
      row.scavengeMs.push(minor.count === 0 ? 0 : minor.ms / minor.count);
      row.markCompacts.push(major.count / minutes);
      row.markCompactMs.push(major.count === 0 ? 0 : major.ms / major.count);
      say(
        `round ${round + 1}: ${label}: p50 ${run.latency.p50.toFixed(3)} ms, p99 ${run.latency.p99.toFixed(3)} ms, ${run.non2xx + run.errors} failed, scavenges ${minor.count} (${minor.ms.toFixed(0)} ms), mark-compacts ${major.count} (${major.ms.toFixed(0)} ms)`,
      );
    }
  }
  process.stdout.write(
    `\n${rate} req/s × ${seconds} s, ${flags.rounds} rounds interleaved, medians\n\n| gateway node flags | p50 | p99 | CPU/request | scavenges/min | ms each | mark-compacts/min | ms each |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n`,
  );
  for (const [label, r] of rows) {
    process.stdout.write(
      `| ${label} | ${median(r.p50).toFixed(3)} ms | ${median(r.p99).toFixed(3)} ms | ${median(r.cpuUs).toFixed(0)} µs | ${median(r.scavenges).toFixed(0)} | ${median(r.scavengeMs).toFixed(2)} | ${median(r.markCompacts).toFixed(1)} | ${median(r.markCompactMs).toFixed(2)} |\n`,
    );
  }
} finally {
  await Promise.all(services.map((service) => service.stop(10_000)));
  await Promise.all(databases.map((database) => database.drop().catch(() => undefined)));
}
