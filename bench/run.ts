/**
 * `npm run bench`: the gateway benchmark (targets in docs/architecture.md). In one run on this machine it puts the same
 * load on (a) the fake OpenAI-compatible upstream directly, (b) a bare pass-through proxy, (c) the gateway with
 * the master key only and (d) the gateway with its full pipeline (virtual key, Postgres, Redis), each in its
 * own child process, and reports added latency at fixed rates, throughput at saturation with the CPU each
 * process spent per request, streaming time to first token and the gateways' RSS. Prints the tables and
 * writes bench/RESULTS.md. `npm run bench -- --help` for the flags.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { cpus, freemem, loadavg, release, tmpdir, totalmem, type } from "node:os";
import { join, relative, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { redactRedisUrl } from "../services/gateway/src/cache/redis.js";
import { describeDatabase } from "../services/gateway/src/db/pool.js";
import {
  assertAlive,
  freePort,
  memoryKiB,
  readyLine,
  repoRoot,
  type Service,
  spawnService,
  waitForHttp,
} from "./lib/children.js";
import { type CpuMeter, postgresMeter, processMeter, redisMeter, startCpu } from "./lib/cpu.js";
import { type BenchDatabase, createBenchDatabase, generateVirtualKey } from "./lib/full-pipeline.js";
import { benchGatewayEnv } from "./lib/gateway-env.js";
import { gcBetween, readGcTotals } from "./lib/gc.js";
import {
  answeredCounts,
  cannon,
  checkTarget,
  type LoadResult,
  mergeRounds,
  type PacedResult,
  pacedLoad,
  streamTiming,
  type Target,
} from "./lib/load.js";
import { summarizeProfile } from "./lib/profile.js";
import { type BenchResults, figures, resultsMarkdown, targetsTable } from "./lib/report.js";
import { median } from "./lib/stats.js";

const usage = `Usage: npm run bench -- [flags]

  --duration <s>          seconds per fixed-rate run and round (default 5)
  --rates <list>          fixed rates in req/s (default 500,1000)
  --saturation <s>        seconds per saturation run and round (default 5)
  --rounds <n>            rounds of the fixed-rate and saturation runs, targets interleaved in a
                          rotating order; medians are reported (default 3)
  --connections <n>       autocannon connections at saturation (default 32)
  --warmup <s>            closed-loop warm-up per target before measuring (default 3)
  --stream-requests <n>   sequential streamed requests per target (default 100)
  --stream-concurrency <n> concurrent streams per wave, 4 waves (default 16)
  --chunk-delay <ms>      upstream delay between streamed chunks (default 2)
  --no-autocannon-rate    skip the autocannon overallRate runs
  --soak <s>              after the rest, load the gateway for <s> seconds at --soak-rate, sampling RSS
                          every 30 s (the target's soak is 600; default 0)
  --soak-rate <n>         req/s during the soak (default 1000)
  --no-full               leave out (d), the gateway's full pipeline (then the targets are judged on (c));
                          (d) gets a fresh Postgres database (DATABASE_URL, dropped at the end), Redis
                          (REDIS_URL) and requests with a virtual key from POST /key/generate
  --postgres <url>        admin URL for (d) (default postgres://postgres@127.0.0.1:5432/postgres)
  --redis <url>           REDIS_URL for (d) (default redis://127.0.0.1:6379)
  --from-source           run the gateways from TypeScript through tsx (npm run dev) instead of building
                          services/gateway first and running dist/server.js (npm start, the image's CMD)
  --gateway-node-flags=<flags>
                          extra node flags for the two gateways only, e.g. --gateway-node-flags=--max-semi-space-size=32
  --profile               run the gateways and the pass-through proxy under node --cpu-prof (profiles in
                          $TMPDIR/gateway-bench-profiles) and summarise where their time goes
  --output <file>         results file (default bench/RESULTS.md)
  --help
`;

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    rates: { type: "string", default: "500,1000" },
    saturation: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "32" },
    warmup: { type: "string", default: "3" },
    "stream-requests": { type: "string", default: "100" },
    "stream-concurrency": { type: "string", default: "16" },
    "chunk-delay": { type: "string", default: "2" },
    "no-autocannon-rate": { type: "boolean", default: false },
    soak: { type: "string", default: "0" },
    "soak-rate": { type: "string", default: "1000" },
    "no-full": { type: "boolean", default: false },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
    redis: { type: "string", default: "redis://127.0.0.1:6379" },
    "gateway-node-flags": { type: "string", default: "" },
    "from-source": { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    output: { type: "string", default: "bench/RESULTS.md" },
    help: { type: "boolean", default: false },
  },
  allowPositionals: false,
});

if (flags.help) {
  process.stdout.write(usage);
  process.exit(0);
}

/** A positive number flag, or exit with the usage. */
function num(name: keyof typeof flags, min = 0): number {
  const value = Number(flags[name]);
  if (!Number.isFinite(value) || value < min) {
    process.stderr.write(`--${name} must be a number ≥ ${min}\n\n${usage}`);
    process.exit(2);
  }
  return value;
}

const settings = {
  duration: num("duration", 1),
  rates: String(flags.rates)
    .split(",")
    .map((r) => Number(r.trim()))
    .filter((r) => r > 0),
  saturation: num("saturation", 1),
  rounds: num("rounds", 1),
  connections: num("connections", 1),
  warmup: num("warmup"),
  streamRequests: num("stream-requests"),
  streamConcurrency: num("stream-concurrency", 1),
  chunkDelay: num("chunk-delay"),
  soak: num("soak"),
  soakRate: num("soak-rate", 1),
};
const output = resolve(repoRoot, String(flags.output));
const upstreamKey = "sk-bench-upstream-key";
const masterKey = `sk-bench-master-${process.pid}-${Date.now()}`;
const say = (line: string) => process.stderr.write(`bench: ${line}\n`);
const services: Service[] = [];
let database: BenchDatabase | undefined;

async function cleanup(): Promise<void> {
  await Promise.all(services.map((s) => s.stop().catch(() => {})));
  await database?.drop().catch((error: unknown) => say(`could not drop ${database?.url}: ${String(error)}`));
}
process.once("SIGINT", () => {
  void cleanup().then(() => process.exit(130));
});

async function main(): Promise<void> {
  const began = performance.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const profileDir = join(tmpdir(), "gateway-bench-profiles");
  if (flags.profile) mkdirSync(profileDir, { recursive: true });
  const profilesBefore = new Set(existsSync(profileDir) ? readdirSync(profileDir) : []);
  const profileFlags = flags.profile ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [];

  const full = !flags["no-full"];
  say(
    `starting the fake upstream, the pass-through proxy and the gateway${full ? "s (master key; full pipeline)" : ""}, each in its own process`,
  );
  const upstream = spawnService("upstream", {
    entry: "bench/upstream.ts",
    env: {
      ...process.env,
      BENCH_UPSTREAM_API_KEY: upstreamKey,
      BENCH_CHUNK_DELAY_MS: String(settings.chunkDelay),
    },
  });
  services.push(upstream);
  const up = await readyLine<{ ready: true; url: string; port: number }>(upstream);
  const upstreamOrigin = `http://127.0.0.1:${up.port}`;

  const proxy = spawnService("passthrough", {
    entry: "bench/passthrough.ts",
    env: { ...process.env, BENCH_TARGET: upstreamOrigin },
    nodeFlags: profileFlags,
  });
  services.push(proxy);
  const px = await readyLine<{ ready: true; url: string; port: number }>(proxy);

  let redis: CpuMeter | undefined;
  if (full) {
    const needs = (what: string, where: string) => (error: unknown) => {
      throw new Error(
        `the full-pipeline gateway needs ${what} at ${where} (${error instanceof Error ? error.message : String(error)}); start it, point --${what.toLowerCase()} at it, or pass --no-full`,
      );
    };
    redis = await redisMeter(String(flags.redis)).catch(needs("Redis", redactRedisUrl(String(flags.redis))));
    database = await createBenchDatabase(String(flags.postgres)).catch(
      needs("Postgres", describeDatabase(String(flags.postgres))),
    );
    say(
      `full pipeline: database ${new URL(database.url).pathname.slice(1)}, Redis ${redactRedisUrl(String(flags.redis))}`,
    );
  }
  const gatewayEntry = flags["from-source"]
    ? "services/gateway/src/server.ts"
    : "services/gateway/dist/server.js";
  if (!flags["from-source"]) {
    say("building services/gateway (npm run build -w services/gateway), as npm start and the image run it");
    try {
      execFileSync("npm", ["run", "build", "-w", "services/gateway"], { cwd: repoRoot, encoding: "utf8" });
    } catch (error) {
      const out = error as { stdout?: string; stderr?: string };
      throw new Error(
        `npm run build -w services/gateway failed (or pass --from-source):\n${`${out.stdout ?? ""}${out.stderr ?? ""}`.trim().slice(-2000)}`,
      );
    }
  }
  /** A gateway on a free port; `databaseUrl`/`redisUrl` empty means without them. */
  const startGateway = async (name: string, databaseUrl: string, redisUrl: string) => {
    const port = await freePort();
    const service = spawnService(name, {
      entry: gatewayEntry,
      nodeFlags: [...profileFlags, ...String(flags["gateway-node-flags"]).split(" ").filter(Boolean)],
      env: benchGatewayEnv({ port, masterKey, upstreamUrl: up.url, upstreamKey }, databaseUrl, redisUrl),
    });
    services.push(service);
    const origin = `http://127.0.0.1:${port}`;
    await waitForHttp(service, `${origin}/health/liveliness`);
    return { service, origin };
  };
  const gateways = [
    {
      ...(await startGateway("gateway", "", "")),
      mode: "master key (GATEWAY_MASTER_KEY), no DATABASE_URL or REDIS_URL: limits kept in process, no spend writes",
    },
  ];
  if (database !== undefined) {
    gateways.push({
      ...(await startGateway("gateway-full", database.url, String(flags.redis))),
      mode: "full pipeline: virtual key (cached lookup in Postgres), rpm/tpm and budget in Redis (REDIS_URL), batched spend rows in Postgres (DATABASE_URL), metrics",
    });
  }
  const judged = gateways[gateways.length - 1]!;
  /** Memory of every gateway, after checking that no child has died. */
  const gatewayMemory = (label: string): BenchResults["rss"] => {
    for (const service of services) assertAlive(service);
    return gateways.map((g) => ({ process: g.service.name, label, ...memoryKiB(g.service.pid) }));
  };
  const rss: BenchResults["rss"] = [];
  const sampleRss = (label: string) => rss.push(...gatewayMemory(label));
  sampleRss("started");

  const json = (token: string) => ({ "content-type": "application/json", authorization: `Bearer ${token}` });
  const targets: Target[] = [
    {
      name: "upstream",
      origin: upstreamOrigin,
      path: "/v1/chat/completions",
      headers: json(upstreamKey),
      model: "fake-model",
    },
    {
      name: "passthrough",
      origin: px.url,
      path: "/v1/chat/completions",
      headers: json(upstreamKey),
      model: "fake-model",
    },
  ];
  for (const g of gateways) {
    const token = g === gateways[0] ? masterKey : await generateVirtualKey(g.origin, masterKey);
    targets.push({
      name: g.service.name,
      origin: g.origin,
      path: "/v1/chat/completions",
      headers: json(token),
      model: "bench",
    });
  }
  const meters: CpuMeter[] = [
    processMeter("load generator", process.pid),
    processMeter("upstream", upstream.pid),
    processMeter("passthrough", proxy.pid),
    ...gateways.map((g) => processMeter(g.service.name, g.service.pid)),
  ];
  if (database !== undefined) {
    meters.push(redis!, await postgresMeter(database.url));
  }
  for (const target of targets) {
    await checkTarget(target, false);
    await checkTarget(target, true);
  }

  say(`warming up (${settings.warmup} s each)`);
  for (const target of targets) {
    if (settings.warmup > 0) await cannon(target, { seconds: settings.warmup, connections: 16 });
  }
  sampleRss("after warm-up");

  /** The targets in a different order each round, so that no target always runs right after another. */
  const rotated = (round: number) => targets.map((_, i) => targets[(i + round) % targets.length]!);

  const pacedRounds = new Map<string, PacedResult[]>();
  const gcPaced = new Map<string, BenchResults["gc"][number]>();
  for (let round = 0; round < settings.rounds; round++) {
    for (const rate of settings.rates) {
      for (const target of rotated(round)) {
        say(
          `${target.name}: ${rate} req/s open loop, ${settings.duration} s (round ${round + 1}/${settings.rounds})`,
        );
        const key = `${rate} ${target.name}`;
        const gateway = gateways.find((g) => g.service.name === target.name);
        const gcBefore = gateway === undefined ? undefined : await readGcTotals(gateway.origin);
        const result = await pacedLoad(target, { rate, seconds: settings.duration });
        pacedRounds.set(key, [...(pacedRounds.get(key) ?? []), result]);
        if (gateway !== undefined && gcBefore !== undefined) {
          const pauses = gcBetween(gcBefore, await readGcTotals(gateway.origin));
          const sum = gcPaced.get(key) ?? { target: target.name, rate, seconds: 0, kinds: {} };
          sum.seconds += result.seconds;
          for (const [kind, v] of Object.entries(pauses)) {
            const k = sum.kinds[kind] ?? { count: 0, ms: 0 };
            sum.kinds[kind] = { count: k.count + v.count, ms: k.ms + v.ms };
          }
          gcPaced.set(key, sum);
        }
      }
    }
  }
  const paced = settings.rates.flatMap((rate) =>
    targets.map((t) => mergeRounds(pacedRounds.get(`${rate} ${t.name}`) ?? [])),
  );

  const autocannonRate: BenchResults["autocannonRate"] = [];
  if (!flags["no-autocannon-rate"]) {
    for (const rate of settings.rates) {
      for (const target of targets) {
        say(`${target.name}: ${rate} req/s autocannon overallRate, ${settings.duration} s`);
        const result = await cannon(target, {
          seconds: settings.duration,
          connections: 10,
          overallRate: rate,
        });
        autocannonRate.push({ ...result, rate });
      }
    }
  }

  const rounds = new Map<string, LoadResult[]>();
  const cpuUsed = new Map<string, { requests: number; ms: Record<string, number> }>();
  for (let round = 0; round < settings.rounds; round++) {
    for (const target of rotated(round)) {
      say(
        `${target.name}: saturation, ${settings.connections} connections, ${settings.saturation} s (round ${round + 1}/${settings.rounds})`,
      );
      const stopCpu = await startCpu(meters);
      const result = await cannon(target, {
        seconds: settings.saturation,
        connections: settings.connections,
      });
      const used = await stopCpu();
      rounds.set(target.name, [...(rounds.get(target.name) ?? []), result]);
      const sum = cpuUsed.get(target.name) ?? { requests: 0, ms: {} };
      sum.requests += result.ok + result.non2xx;
      for (const [name, ms] of Object.entries(used)) sum.ms[name] = (sum.ms[name] ?? 0) + ms;
      cpuUsed.set(target.name, sum);
    }
  }
  const cpu = targets.map((t) => ({ target: t.name, ...(cpuUsed.get(t.name) ?? { requests: 0, ms: {} }) }));
  const saturation = targets.map((t) => {
    const runs = rounds.get(t.name) ?? [];
    const rps = median(runs.map((r) => r.rps));
    const middle = runs.reduce(
      (best, r) => (Math.abs(r.rps - rps) < Math.abs(best.rps - rps) ? r : best),
      runs[0]!,
    );
    return {
      target: t.name,
      rounds: runs.map((r) => r.rps),
      rps,
      errors: runs.reduce((n, r) => n + r.errors + r.non2xx, 0),
      latency: middle.latency,
    };
  });
  sampleRss("after saturation");

  const streams: BenchResults["streams"] = [];
  if (settings.streamRequests > 0) {
    for (const target of targets) {
      say(
        `${target.name}: ${settings.streamRequests} streams, then 4 waves of ${settings.streamConcurrency}`,
      );
      streams.push(
        await streamTiming(target, {
          sequential: settings.streamRequests,
          concurrency: settings.streamConcurrency,
          waves: 4,
        }),
      );
    }
  }

  const soak: BenchResults["soak"] = [];
  if (settings.soak > 0) {
    const soakTarget = targets.find((t) => t.name === judged.service.name)!;
    const soakRss = () => gatewayMemory("soak").find((s) => s.process === judged.service.name)!.rss;
    say(`soak: ${soakTarget.name} at ${settings.soakRate} req/s for ${settings.soak} s`);
    const soakStart = performance.now();
    soak.push([0, soakRss()]);
    for (let left = settings.soak; left > 0; left -= 30) {
      await pacedLoad(soakTarget, { rate: settings.soakRate, seconds: Math.min(30, left) });
      soak.push([Math.round((performance.now() - soakStart) / 1000), soakRss()]);
    }
  }
  sampleRss("end");

  for (const g of gateways) await g.service.stop();
  await proxy.stop();
  await Promise.all(meters.map((m) => m.close?.()));
  const profiles: NonNullable<BenchResults["profiles"]> = [];
  if (flags.profile) {
    for (const service of [...gateways.map((g) => g.service), proxy]) {
      // One profile per thread (Node runs module-loader hooks in a worker): the main thread's is the largest.
      const written = readdirSync(profileDir)
        .filter((f) => f.endsWith(".cpuprofile") && f.includes(`.${service.pid}.`) && !profilesBefore.has(f))
        .sort((x, y) => statSync(join(profileDir, y)).size - statSync(join(profileDir, x)).size);
      const file = written[0];
      if (file === undefined) say(`no CPU profile was written for ${service.name}`);
      else {
        const path = join(profileDir, file);
        const requests = answeredCounts()[service.name] ?? 0;
        profiles.push({ process: service.name, file: path, summary: summarizeProfile(path), requests });
      }
    }
  }
  await cleanup();

  const cores = cpus();
  const results: BenchResults = {
    date: new Date().toISOString(),
    machine: {
      nproc: cores.length,
      cpu: cores[0]?.model.trim() ?? "unknown",
      memGiB: totalmem() / 2 ** 30,
      node: process.version,
      os: `${type()} ${release()}`,
    },
    loadAverage: [loadAtStart, loadavg()[0] ?? 0],
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
    gateways: gateways.map((g) => ({ name: g.service.name, mode: g.mode })),
    judged: judged.service.name,
    cpu,
    gc: [...gcPaced.values()],
    settings: { ...settings, rates: settings.rates.join("/") },
    paced,
    autocannonRate,
    saturation,
    streams,
    rss,
    soak,
    ...(profiles.length === 0 ? {} : { profiles }),
    seconds: (performance.now() - began) / 1000,
  };
  process.stdout.write(`\n${targetsTable(results)}\n\n${figures(results)}\n\n`);
  writeFileSync(output, resultsMarkdown(results, output));
  say(
    `wrote ${relative(repoRoot, output)} (${results.seconds.toFixed(0)} s, free memory ${(freemem() / 2 ** 30).toFixed(1)} GiB)`,
  );
}

main().catch(async (error: unknown) => {
  say(`failed: ${error instanceof Error ? error.message : String(error)}`);
  await cleanup();
  process.exit(1);
});
