/**
 * Gateway CPU while idle after many virtual keys were each used once: whether what an instance did per key
 * earlier (leases taken and returned, floors learnt, keys cached, metrics' label sets) keeps costing CPU once the
 * traffic stops. Each gateway runs the full pipeline (bench/gateway.yaml, Postgres, Redis) on a private
 * redis-server; N copies of one virtual key (bench/lib/many-keys.ts) each get one chat call, 16 at a time; after
 * a 5 s settle (the warm-up's leases are returned, docs/leases.md) the gateway's RSS is read, then
 * its CPU (user + system, /proc, its workers summed in) is read every `--slice-seconds` for `--idle-seconds`
 * with no traffic at all, and reported as CPU ms per second of wall time per slice. The V8 heap in use is read
 * last, from one `GET /metrics` (a scrape with 100,000 keys' label sets costs seconds of CPU, so not before the
 * idle span). With `--before <dir>` a
 * second gateway built from another checkout (e.g. `main`) is warmed the same way and measured over the same
 * idle span, side by side (both idle at once, so they share the machine's load alike).
 *
 *   npm run build -w services/gateway   # in each checkout
 *   npx tsx bench/many-keys-idle.ts [--keys 100000] [--idle-seconds 60] [--slice-seconds 10] [--before <dir>]
 *     [--profile]   # CPU profile of each gateway over the idle span (needs node --experimental-websocket:
 *                   # NODE_OPTIONS=--experimental-websocket); self time by function printed at the end
 *     [--trace-gc]  # the gateways run with node --trace-gc: the collections during the idle span are counted
 *
 * Needs `redis-server` on the PATH and the local Postgres (`--postgres`).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { freePort, readyLine, repoRoot, type Service, spawnService, treeMemoryKiB } from "./lib/children.js";
import { processMeter } from "./lib/cpu.js";
import {
  type BenchDatabase,
  checkoutGatewaySettings,
  startFullPipelineGateway,
} from "./lib/full-pipeline.js";
import { inspector } from "./lib/inspector.js";
import { chatOnce, heapUsedBytes, insertKeyCopies } from "./lib/many-keys.js";
import { type PrivateRedis, startPrivateRedis } from "./lib/private-redis.js";
import { summarizeProfile } from "./lib/profile.js";
import { median } from "./lib/stats.js";

const { values: flags } = parseArgs({
  options: {
    keys: { type: "string", default: "100000" },
    "idle-seconds": { type: "string", default: "60" },
    "slice-seconds": { type: "string", default: "10" },
    before: { type: "string" },
    profile: { type: "boolean", default: false },
    "trace-gc": { type: "boolean", default: false },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
  },
});
const keyCount = Number(flags.keys);
const sliceMs = Number(flags["slice-seconds"]) * 1000;
const slices = Math.max(1, Math.round((Number(flags["idle-seconds"]) * 1000) / sliceMs));
const masterKey = `sk-bench-master-${randomBytes(8).toString("hex")}`;
const upstreamKey = "sk-bench-upstream-key";
const say = (line: string) =>
  process.stderr.write(`many-keys-idle [${new Date().toISOString().slice(11, 19)}]: ${line}\n`);
const services: Service[] = [];
const databases: BenchDatabase[] = [];

interface Gateway {
  label: string;
  service: Service;
  origin: string;
  cpu: () => Promise<number>;
  /** RSS after the warm-up and V8 heap used after the idle span, MiB. */
  rssMiB: number;
  heapMiB: number;
  /** CPU ms per wall second, per idle slice. */
  idle: number[];
  cdp?: (method: string, params?: object) => Promise<unknown>;
  /** `--trace-gc` lines of the gateway (stdout), from the start of the idle span. */
  gcLines: string[];
}

/** Starts a gateway from `dir` (built) and inserts its keys; the warm-up comes later. */
async function startGateway(label: string, dir: string, redisUrl: string, upstreamUrl: string) {
  const inspectPort = await freePort();
  const { service, origin, database, key } = await startFullPipelineGateway(
    label,
    checkoutGatewaySettings(label, dir, { masterKey, upstreamUrl, upstreamKey }),
    { adminUrl: String(flags.postgres), databasePrefix: "manykeysidle", redisUrl },
    {
      checkout: dir,
      nodeFlags: [
        ...(flags.profile ? [`--inspect=127.0.0.1:${inspectPort}`] : []),
        ...(flags["trace-gc"] ? ["--trace-gc"] : []),
      ],
    },
  );
  databases.push(database);
  services.push(service);
  const keys = [key, ...(await insertKeyCopies(database.url, key, keyCount - 1))];
  const cdp = flags.profile ? await inspector(inspectPort) : undefined;
  // --trace-gc writes one line per collection to stdout, read from the start so that the pipe never fills.
  const gcLines: string[] = [];
  service.child.stdout?.on("data", (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) if (/ ms: /.test(line)) gcLines.push(line.trim());
  });
  return { label, service, origin, keys, cdp, gcLines };
}

const mib = (n: number) => n.toFixed(0);

let privateRedis: PrivateRedis | undefined;
try {
  privateRedis = await startPrivateRedis();
  const upstream = spawnService("upstream", {
    entry: "bench/upstream.ts",
    env: { ...process.env, BENCH_UPSTREAM_API_KEY: upstreamKey },
  });
  services.push(upstream);
  const upstreamUrl = (await readyLine<{ ready: true; url: string }>(upstream)).url;

  const started = [await startGateway("after", repoRoot, privateRedis.url, upstreamUrl)];
  if (flags.before !== undefined)
    started.push(await startGateway("before", resolve(flags.before), privateRedis.url, upstreamUrl));

  const gateways: Gateway[] = [];
  for (const g of started) {
    const began = Date.now();
    await chatOnce(g.origin, g.keys);
    say(`${g.label}: ${g.keys.length} keys used once each (${(Date.now() - began) / 1000} s)`);
    const meter = processMeter(g.label, g.service.pid);
    gateways.push({ ...g, cpu: () => meter.read(), rssMiB: 0, heapMiB: 0, idle: [] });
  }
  await sleep(5000); // the last leases go idle (1 s) and are returned
  for (const g of gateways) {
    g.rssMiB = treeMemoryKiB(g.service.pid).rss / 1024;
    say(`${g.label}: RSS ${mib(g.rssMiB)} MiB after the warm-up`);
    if (g.cdp !== undefined) {
      await g.cdp("Profiler.enable");
      await g.cdp("Profiler.setSamplingInterval", { interval: 1000 });
      await g.cdp("Profiler.start");
    }
  }

  for (const g of gateways) g.gcLines.length = 0; // from here on: the idle span
  let last = await Promise.all(gateways.map((g) => g.cpu()));
  let lastAt = performance.now();
  for (let slice = 0; slice < slices; slice++) {
    await sleep(sliceMs);
    const now = await Promise.all(gateways.map((g) => g.cpu()));
    const at = performance.now();
    gateways.forEach((g, i) => {
      g.idle.push(((now[i] ?? Number.NaN) - (last[i] ?? Number.NaN)) / ((at - lastAt) / 1000));
    });
    say(
      `idle slice ${slice + 1}/${slices}: ${gateways.map((g) => `${g.label} ${g.idle.at(-1)!.toFixed(1)} ms/s`).join(", ")}`,
    );
    last = now;
    lastAt = at;
  }

  const profiles: Array<{ label: string; file: string }> = [];
  const profileDir = join(tmpdir(), `many-keys-idle-profiles-${process.pid}`);
  for (const g of gateways) {
    if (g.cdp === undefined) continue;
    const { profile } = (await g.cdp("Profiler.stop")) as { profile: unknown };
    mkdirSync(profileDir, { recursive: true });
    const file = join(profileDir, `${g.label}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    profiles.push({ label: g.label, file });
  }
  for (const g of gateways) g.heapMiB = (await heapUsedBytes(g.origin)) / 2 ** 20;
  process.stdout.write(
    `\n${keyCount.toLocaleString("en")} keys used once each, then idle ${slices} × ${sliceMs / 1000} s; gateway CPU ms per wall second\n\n| gateway | RSS after warm-up | heap used after | idle CPU median | mean | max slice | slices |\n| --- | --- | --- | --- | --- | --- | --- |\n`,
  );
  for (const g of gateways) {
    const mean = g.idle.reduce((s, v) => s + v, 0) / g.idle.length;
    process.stdout.write(
      `| ${g.label} | ${mib(g.rssMiB)} MiB | ${mib(g.heapMiB)} MiB | ${median(g.idle).toFixed(1)} ms/s | ${mean.toFixed(1)} ms/s | ${Math.max(...g.idle).toFixed(1)} ms/s | ${g.idle.map((v) => v.toFixed(1)).join(" ")} |\n`,
    );
  }
  for (const g of gateways.filter(() => flags["trace-gc"])) {
    const full = g.gcLines.filter((line) => line.includes("Mark-Compact"));
    process.stdout.write(
      `\n${g.label}: ${g.gcLines.length} collections while idle, ${full.length} mark-compact:\n${full.map((line) => `  ${line}`).join("\n")}\n`,
    );
  }
  for (const { file, label } of profiles) {
    const summary = summarizeProfile(file, 25);
    process.stdout.write(`\n${label}: ${file}: busy ${summary.busyMs.toFixed(0)} ms over the idle span\n`);
    for (const e of summary.areas) process.stdout.write(`  area ${e.ms.toFixed(0)} ms ${e.name}\n`);
    for (const e of summary.functions) process.stdout.write(`  fn ${e.ms.toFixed(0)} ms ${e.name}\n`);
  }
} finally {
  await Promise.all(services.map((service) => service.stop(15_000)));
  await Promise.all(databases.map((database) => database.drop().catch(() => undefined)));
  privateRedis?.stop();
}
