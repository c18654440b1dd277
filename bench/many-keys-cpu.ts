/**
 * Gateway CPU and Redis commands per chat call with one virtual key against many (round robin), side by side
 * for this checkout and, with `--before <dir>`, another built checkout (e.g. `main`), in one run. Each gateway
 * runs the full pipeline (bench/gateway.yaml, Postgres, Redis) on a private redis-server, so Redis's
 * `INFO commandstats` counts only the gateways' commands. The keys are copies of one virtual key
 * (bench/lib/many-keys.ts), each warmed with one chat call so that the key cache and the metrics' label sets
 * hold them all; before each run the keys it will use get one more chat call and a 5 s pause: what is measured
 * is a key used again after more than a lease lifetime (5 s) but well within the key cache's 60 s refresh age,
 * not a first use or a key reload. Rounds alternate 1 key and N keys on every gateway at a fixed rate; each run's CPU and commands are read
 * over the run and the 2.5 s after it (so the idle leases it left are returned and counted too).
 *
 *   npm run build -w services/gateway   # in each checkout
 *   npx tsx bench/many-keys-cpu.ts [--keys 100000] [--rate 800] [--seconds 6] [--rounds 3] [--before <dir>]
 *     [--profile]   # CPU profile of each gateway over its first-round runs (needs node --experimental-websocket:
 *                   # NODE_OPTIONS=--experimental-websocket); self time per call by function printed at the end
 *
 * Needs `redis-server` on the PATH and the local Postgres (`--postgres`).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { freePort, readyLine, repoRoot, type Service, spawnService } from "./lib/children.js";
import { processMeter, startCpu } from "./lib/cpu.js";
import {
  type BenchDatabase,
  checkoutGatewaySettings,
  startFullPipelineGateway,
} from "./lib/full-pipeline.js";
import { inspector } from "./lib/inspector.js";
import { pacedLoad, type Target } from "./lib/load.js";
import { chatOnce, insertKeyCopies } from "./lib/many-keys.js";
import { type PrivateRedis, startPrivateRedis } from "./lib/private-redis.js";
import { summarizeProfile } from "./lib/profile.js";
import { commandsBetween, parseCommandStats } from "./lib/redis-commands.js";
import { median } from "./lib/stats.js";

const { values: flags } = parseArgs({
  options: {
    keys: { type: "string", default: "100000" },
    rate: { type: "string", default: "800" },
    seconds: { type: "string", default: "6" },
    rounds: { type: "string", default: "3" },
    before: { type: "string" },
    profile: { type: "boolean", default: false },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
  },
});
const keyCount = Number(flags.keys);
const rate = Number(flags.rate);
const seconds = Number(flags.seconds);
const rounds = Number(flags.rounds);
const masterKey = `sk-bench-master-${randomBytes(8).toString("hex")}`;
const upstreamKey = "sk-bench-upstream-key";
const say = (line: string) =>
  process.stderr.write(`many-keys [${new Date().toISOString().slice(11, 19)}]: ${line}\n`);
const services: Service[] = [];
const databases: BenchDatabase[] = [];
const profileDir = join(tmpdir(), `many-keys-profiles-${process.pid}`);

interface Gateway {
  label: string;
  service: Service;
  origin: string;
  keys: string[];
  /** Chrome DevTools protocol call on the gateway's inspector (with `--profile`). */
  cdp?: (method: string, params?: object) => Promise<unknown>;
}

async function startGateway(
  label: string,
  dir: string,
  redisUrl: string,
  upstreamUrl: string,
): Promise<Gateway> {
  const inspectPort = await freePort();
  const { service, origin, database, key } = await startFullPipelineGateway(
    label,
    checkoutGatewaySettings(label, dir, { masterKey, upstreamUrl, upstreamKey }),
    { adminUrl: String(flags.postgres), databasePrefix: "manykeys", redisUrl },
    { checkout: dir, nodeFlags: flags.profile ? [`--inspect=127.0.0.1:${inspectPort}`] : [] },
  );
  databases.push(database);
  services.push(service);
  const began = Date.now();
  const keys = [key, ...(await insertKeyCopies(database.url, key, keyCount - 1))];
  await chatOnce(origin, keys);
  say(
    `${label}: ${keys.length} keys inserted and warmed with a chat call each (${(Date.now() - began) / 1000} s)`,
  );
  if (!flags.profile) return { label, service, origin, keys };
  const cdp = await inspector(inspectPort);
  await cdp("Profiler.enable");
  await cdp("Profiler.setSamplingInterval", { interval: 250 });
  return { label, service, origin, keys, cdp };
}

let privateRedis: PrivateRedis | undefined;
try {
  privateRedis = await startPrivateRedis();
  const { url: redisUrl, client: redis } = privateRedis;
  const upstream = spawnService("upstream", {
    entry: "bench/upstream.ts",
    env: { ...process.env, BENCH_UPSTREAM_API_KEY: upstreamKey },
  });
  services.push(upstream);
  const upstreamUrl = (await readyLine<{ ready: true; url: string }>(upstream)).url;
  if (flags.profile) mkdirSync(profileDir, { recursive: true });

  const gateways = [await startGateway("after", repoRoot, redisUrl, upstreamUrl)];
  if (flags.before !== undefined)
    gateways.push(await startGateway("before", resolve(flags.before), redisUrl, upstreamUrl));
  await sleep(3000); // the warm-up's leases go idle and are returned

  const sets = [1, keyCount];
  const profiles: Array<{ file: string; calls: number }> = [];
  /** Each target's tokens (one array, so pacedLoad's round-robin cursor carries on between rounds). */
  const tokenSets = new Map<string, string[]>();
  /** Where each target's cursor stands (pacedLoad issues every planned request). */
  const cursors = new Map<string, number>();
  const perRun = Math.round(rate * seconds);
  const results = new Map<string, { cpuUs: number[]; commands: number[]; p99: number[] }>();
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? gateways : [...gateways].reverse();
    for (const g of order) {
      for (const n of round % 2 === 0 ? sets : [...sets].reverse()) {
        const tokens = tokenSets.get(`${g.label} ${n}`) ?? g.keys.slice(0, n);
        tokenSets.set(`${g.label} ${n}`, tokens);
        const target: Target = {
          name: `${g.label} ${n}`,
          origin: g.origin,
          path: "/v1/chat/completions",
          headers: { authorization: `Bearer ${g.keys[0]}`, "content-type": "application/json" },
          model: "bench",
          tokens,
        };
        if (n > 1) {
          // The keys this run will use, used once more now: fresh in the key cache (well under its 60 s refresh
          // age) and, after the pause, with no lease left (used less often than once per lease lifetime).
          const at = cursors.get(target.name) ?? 0;
          await chatOnce(
            g.origin,
            Array.from({ length: perRun }, (_, i) => tokens[(at + i) % n]!),
          );
          cursors.set(target.name, at + perRun);
          await sleep(5000);
        }
        const statsBefore = parseCommandStats(await redis.info("commandstats"));
        const stop = await startCpu([processMeter(g.label, g.service.pid)]);
        const profiling = g.cdp !== undefined && round === 0;
        if (profiling) await g.cdp!("Profiler.start");
        const run = await pacedLoad(target, { rate, seconds });
        await sleep(2500);
        const cpu = (await stop())[g.label]!;
        if (profiling) {
          const { profile } = (await g.cdp!("Profiler.stop")) as { profile: unknown };
          const file = join(profileDir, `${g.label}-${n}.cpuprofile`);
          writeFileSync(file, JSON.stringify(profile));
          profiles.push({ file, calls: run.ok + run.non2xx });
        }
        const commands = commandsBetween(statsBefore, parseCommandStats(await redis.info("commandstats")));
        delete commands.info;
        const calls = run.ok + run.non2xx;
        const total = Object.values(commands).reduce((s, v) => s + v, 0);
        const entry = results.get(target.name) ?? { cpuUs: [], commands: [], p99: [] };
        results.set(target.name, entry);
        entry.cpuUs.push((cpu * 1000) / calls);
        entry.commands.push(total / calls);
        entry.p99.push(run.latency.p99);
        say(
          `round ${round + 1}: ${target.name} keys: ${calls} calls (${run.non2xx} non-2xx, ${run.errors} errors), ${((cpu * 1000) / calls).toFixed(0)} µs CPU/call, ${(total / calls).toFixed(3)} Redis commands/call (${Object.entries(
            commands,
          )
            .map(([k, v]) => `${k} ${(v / calls).toFixed(3)}`)
            .join(", ")})`,
        );
      }
    }
  }
  process.stdout.write(
    `\n${rate} req/s × ${seconds} s, ${rounds} rounds, medians; keys warmed with one chat call each\n\n| gateway | keys | gateway CPU per call | ÷ 1 key | Redis commands per call | p99 |\n| --- | --- | --- | --- | --- | --- |\n`,
  );
  for (const g of gateways) {
    const one = median(results.get(`${g.label} 1`)?.cpuUs ?? [Number.NaN]);
    for (const n of sets) {
      const r = results.get(`${g.label} ${n}`)!;
      const cpu = median(r.cpuUs);
      process.stdout.write(
        `| ${g.label} | ${n.toLocaleString("en")} | ${cpu.toFixed(0)} µs | ${(cpu / one).toFixed(2)}× | ${median(r.commands).toFixed(3)} | ${median(r.p99).toFixed(2)} ms |\n`,
      );
    }
  }
  for (const { file, calls } of profiles) {
    const summary = summarizeProfile(file, 40);
    const perCall = (ms: number) => `${((ms * 1000) / calls).toFixed(1)} µs`;
    process.stdout.write(`\n${file}: busy ${perCall(summary.busyMs)} per call\n`);
    for (const e of summary.areas) process.stdout.write(`  area ${perCall(e.ms)} ${e.name}\n`);
    for (const e of summary.functions) process.stdout.write(`  fn ${perCall(e.ms)} ${e.name}\n`);
  }
} finally {
  await Promise.all(services.map((service) => service.stop(15_000)));
  await Promise.all(databases.map((database) => database.drop().catch(() => undefined)));
  privateRedis?.stop();
}
