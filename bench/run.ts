/**
 * `npm run bench`: the gateway benchmark (targets in docs/architecture.md). In one run on this machine it puts the same
 * load on (a) the fake OpenAI-compatible upstream directly, (b) a bare pass-through proxy, (c) the gateway with
 * the master key only, (d) the gateway with its full pipeline (virtual key, Postgres, Redis) and, with
 * `--baseline <dir>`, (e) the full pipeline built from another checkout (the before of a change), each in its
 * own child process, and reports added latency at fixed rates, throughput at saturation with the CPU and Redis
 * commands each request cost, streaming time to first token, the gateways' RSS and how the cost grows with the
 * request size, the keys in use, the stream length and the worker processes. Prints the tables and writes
 * bench/RESULTS.md. `npm run bench -- --help` for the flags.
 */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { cpus, freemem, loadavg, release, tmpdir, totalmem, type } from "node:os";
import { join, relative, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { redactRedisUrl } from "../services/gateway/src/cache/redis.js";
import { describeDatabase } from "../services/gateway/src/db/pool.js";
import { commitOf, nodeVersion, gatewayEntry as prepareGateway } from "./lib/checkout.js";
import {
  assertAlive,
  readyLine,
  repoRoot,
  type Service,
  spawnGateway,
  spawnService,
  treeMemoryKiB,
} from "./lib/children.js";
import { parseFlags } from "./lib/cli.js";
import { type CpuMeter, postgresMeter, processMeter, redisMeter } from "./lib/cpu.js";
import { type BenchDatabase, createBenchDatabase, generateVirtualKey } from "./lib/full-pipeline.js";
import { benchGatewayEnv } from "./lib/gateway-env.js";
import { answeredCounts, cannon, checkTarget, pacedLoad, streamTiming, type Target } from "./lib/load.js";
import { startPortkey } from "./lib/portkey.js";
import { summarizeProfile } from "./lib/profile.js";
import { type CommandCounter, commandCounter } from "./lib/redis-commands.js";
import { figures, resultsMarkdown, targetsTable } from "./lib/report.js";
import type { BenchResults, ScalingResults } from "./lib/results.js";
import { pacedRounds, saturationRounds } from "./lib/rounds.js";
import { type FullGateway, runScaling } from "./lib/scaling.js";
import { scalingSection } from "./lib/scaling-report.js";

const { flags, settings, scaling: scalingSettings } = parseFlags(process.argv.slice(2));
const output = resolve(repoRoot, String(flags.output));
const upstreamKey = "sk-bench-upstream-key";
const masterKey = `sk-bench-master-${process.pid}-${Date.now()}`;
const began = performance.now();
const clock = () => {
  const sec = Math.round((performance.now() - began) / 1000);
  return `${Math.floor(sec / 60)}:${String(sec % 60).padStart(2, "0")}`;
};
/** A progress line on stderr with the time since the start (m:ss). */
const say = (line: string) => process.stderr.write(`bench [${clock()}]: ${line}\n`);
const services: Service[] = [];
const databases: BenchDatabase[] = [];
const baselineDir = flags.baseline === "" ? undefined : resolve(String(flags.baseline));
const baselineNode = flags["baseline-node"] === "" ? undefined : String(flags["baseline-node"]);
/** Wall time of each part of the run, seconds. */
const phases: Array<[string, number]> = [];
let phaseStart = performance.now();
const phase = (name: string) => {
  const now = performance.now();
  phases.push([name, (now - phaseStart) / 1000]);
  phaseStart = now;
};

async function cleanup(): Promise<void> {
  await Promise.all(services.map((s) => s.stop().catch(() => {})));
  for (const db of databases) {
    await db.drop().catch((error: unknown) => say(`could not drop ${db.url}: ${String(error)}`));
  }
}
process.once("SIGINT", () => {
  void cleanup().then(() => process.exit(130));
});

async function main(): Promise<void> {
  const loadAtStart = loadavg()[0] ?? 0;
  const profileDir = join(tmpdir(), "gateway-bench-profiles");
  if (flags.profile) mkdirSync(profileDir, { recursive: true });
  const profilesBefore = new Set(existsSync(profileDir) ? readdirSync(profileDir) : []);
  const profileFlags = flags.profile ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [];

  const full = !flags["no-full"];
  const baselineEntry =
    baselineDir === undefined ? undefined : join(baselineDir, "services/gateway/dist/server.js");
  if (baselineEntry !== undefined && !existsSync(baselineEntry)) {
    throw new Error(
      `--baseline ${baselineDir}: ${baselineEntry} does not exist (build that checkout's gateway first)`,
    );
  }
  if (baselineDir !== undefined && !full)
    throw new Error("--baseline needs the full pipeline (leave out --no-full)");
  if (baselineNode !== undefined && baselineDir === undefined)
    throw new Error(
      "--baseline-node runs the --baseline checkout's gateway: give --baseline too (e.g. --baseline .)",
    );
  if (baselineNode !== undefined) say(`the before runs on ${baselineNode} (${nodeVersion(baselineNode)})`);
  say(
    `starting the fake upstream, the pass-through proxy and the gateway${full ? "s (master key; full pipeline" : ""}${baselineDir ? "; full pipeline before" : ""}${full ? ")" : ""}, each in its own process`,
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
  const portkey = flags["no-portkey"] ? undefined : await startPortkey(up.url, upstreamKey, profileFlags);
  if (portkey !== undefined) services.push(portkey.service);

  let redis: CpuMeter | undefined;
  let commands: CommandCounter | undefined;
  const redisUrl = String(flags.redis);
  if (full) {
    const needs = (what: string, where: string) => (error: unknown) => {
      throw new Error(
        `the full-pipeline gateway needs ${what} at ${where} (${error instanceof Error ? error.message : String(error)}); start it, point --${what.toLowerCase()} at it, or pass --no-full`,
      );
    };
    redis = await redisMeter(redisUrl).catch(needs("Redis", redactRedisUrl(redisUrl)));
    commands = await commandCounter(redisUrl);
    for (const prefix of baselineDir === undefined ? ["bench"] : ["bench", "bench_before"]) {
      databases.push(
        await createBenchDatabase(String(flags.postgres), prefix).catch(
          needs("Postgres", describeDatabase(String(flags.postgres))),
        ),
      );
    }
    say(
      `full pipeline: database ${databases.map((d) => new URL(d.url).pathname.slice(1)).join(", ")}, Redis ${redactRedisUrl(redisUrl)}`,
    );
  }
  const gatewayEntry = prepareGateway(Boolean(flags["from-source"]), say);
  const runId = `${process.pid}-${Date.now()}`;
  /** A gateway on a free port; `databaseUrl` empty means without a database and Redis. */
  const startGateway = async (
    name: string,
    databaseUrl: string,
    o: { before?: boolean; workers?: number } = {},
  ) => {
    const dir = o.before ? baselineDir! : repoRoot;
    const started = await spawnGateway(
      name,
      benchGatewayEnv(
        {
          port: 0, // spawnGateway picks the port.
          masterKey,
          upstreamUrl: up.url,
          upstreamKey,
          config: join(dir, "bench", "gateway.yaml"),
          workers: o.workers ?? 1,
          ...(databaseUrl === ""
            ? {}
            : { redisKeyPrefix: `bench-${runId}-${o.before ? "before" : "after"}:` }),
        },
        databaseUrl,
        databaseUrl === "" ? "" : redisUrl,
      ),
      {
        entry: o.before ? baselineEntry! : gatewayEntry,
        cwd: dir,
        ...(o.before && baselineNode !== undefined ? { node: baselineNode } : {}),
        nodeFlags: [...profileFlags, ...String(flags["gateway-node-flags"]).split(" ").filter(Boolean)],
      },
    );
    services.push(started.service);
    return started;
  };
  const fullMode =
    "full pipeline: virtual key (cached lookup in Postgres), rpm/tpm and budget in Redis (REDIS_URL), batched spend rows in Postgres (DATABASE_URL), metrics";
  const gateways = [
    {
      ...(await startGateway("gateway", "")),
      mode: "master key (GATEWAY_MASTER_KEY), no DATABASE_URL or REDIS_URL: limits kept in process, no spend writes",
    },
  ];
  const [afterDb, beforeDb] = databases;
  if (afterDb !== undefined)
    gateways.push({ ...(await startGateway("gateway-full", afterDb.url)), mode: fullMode });
  if (beforeDb !== undefined) {
    gateways.push({
      ...(await startGateway("gateway-full-before", beforeDb.url, { before: true })),
      mode: `${fullMode}; built from ${baselineDir} (${commitOf(baselineDir!)}), the before${baselineNode === undefined ? "" : `, on Node ${nodeVersion(baselineNode)} (${baselineNode}; the others on ${process.version})`}`,
    });
  }
  const judged = gateways.find((g) => g.service.name === "gateway-full") ?? gateways[0]!;
  /** Memory of every gateway, after checking that no child has died. */
  const gatewayMemory = (label: string): BenchResults["rss"] => {
    for (const service of services) assertAlive(service);
    return gateways.map((g) => ({ process: g.service.name, label, ...treeMemoryKiB(g.service.pid) }));
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
    ...(portkey === undefined ? [] : [portkey.target]),
  ];
  const fullGateways: FullGateway[] = [];
  for (const [i, g] of gateways.entries()) {
    const token = i === 0 ? masterKey : await generateVirtualKey(g.origin, masterKey);
    const target = {
      name: g.service.name,
      origin: g.origin,
      path: "/v1/chat/completions",
      headers: json(token),
      model: "bench",
    };
    targets.push(target);
    if (i > 0)
      fullGateways.push({ target, pid: g.service.pid, databaseUrl: databases[i - 1]!.url, key: token });
  }
  const meters: CpuMeter[] = [
    processMeter("load generator", process.pid),
    processMeter("upstream", upstream.pid),
    processMeter("passthrough", proxy.pid),
    ...(portkey === undefined ? [] : [processMeter("portkey", portkey.service.pid)]),
    ...gateways.map((g) => processMeter(g.service.name, g.service.pid)),
  ];
  if (afterDb !== undefined) {
    meters.push(
      redis!,
      await postgresMeter(
        afterDb.url,
        databases.slice(1).map((d) => d.url),
      ),
    );
  }
  for (const target of targets) {
    await checkTarget(target, false);
    if (target !== portkey?.target) await checkTarget(target, true);
  }

  say(`warming up (${settings.warmup} s each)`);
  for (const target of targets) {
    if (settings.warmup > 0) await cannon(target, { seconds: settings.warmup, connections: 16 });
  }
  sampleRss("after warm-up");
  phase("start and warm-up");

  const gatewayNames = new Set(gateways.map((g) => g.service.name));
  const { paced, gc } = await pacedRounds(targets, gatewayNames, { ...settings, say });
  phase("fixed rates");

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
    phase("autocannon overallRate");
  }

  const { saturation, cpu } = await saturationRounds(targets, meters, commands, {
    rounds: settings.rounds,
    seconds: settings.saturation,
    connections: settings.connections,
    say,
  });
  sampleRss("after saturation");
  phase("saturation");

  const streams: BenchResults["streams"] = [];
  if (settings.streamRequests > 0) {
    // Portkey's gateway answers streams with 500 on Node 20 (see bench/lib/portkey.ts): not in the stream table.
    for (const target of targets.filter((x) => x !== portkey?.target)) {
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
    phase("streams");
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
    phase("soak");
  }
  sampleRss("end");

  let scaling: ScalingResults | undefined;
  const s = scalingSettings;
  if (s.promptSizes.length + s.keyCounts.length + s.longStreams + s.workers.length > 0) {
    scaling = await runScaling(
      {
        upstream: targets[0]!,
        passthrough: targets[1]!,
        full: fullGateways,
        meters,
        say,
        startWorkers: async (workers) => {
          const { service, origin } = await startGateway(`gateway-full-w${workers}`, afterDb!.url, {
            workers,
          });
          const target = { ...fullGateways[0]!.target, name: service.name, origin };
          return { target, pid: service.pid, stop: () => service.stop() };
        },
        startFresh: async (g) => {
          const before = g.target.name.endsWith("-before");
          const { service, origin } = await startGateway(`${g.target.name}-streams`, g.databaseUrl, {
            before,
          });
          return {
            target: { ...g.target, origin },
            pid: service.pid,
            stop: async () => {
              // Stopped on purpose: no longer checked for being alive.
              services.splice(services.indexOf(service), 1);
              await service.stop();
            },
          };
        },
      },
      s,
    );
    for (const service of services) if (!service.name.startsWith("gateway-full-w")) assertAlive(service);
    phase("scaling");
  }

  for (const g of gateways) await g.service.stop();
  await proxy.stop();
  await portkey?.service.stop();
  await Promise.all(meters.map((m) => m.close?.()));
  await commands?.close();
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
    gc,
    settings: { ...settings, rates: settings.rates.join("/") },
    paced,
    autocannonRate,
    saturation,
    streams,
    rss,
    soak,
    ...(profiles.length === 0 ? {} : { profiles }),
    ...(scaling === undefined ? {} : { scaling }),
    phases,
    seconds: (performance.now() - began) / 1000,
  };
  process.stdout.write(`\n${targetsTable(results)}\n\n${figures(results)}\n\n${scalingSection(scaling)}\n`);
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
