/**
 * Streams a client does not read (issue 28, item 7): the gateway's RSS and another key's latency while
 * `--streams` clients (default 40) each hold a chat-completion stream open without reading it, against an
 * upstream that streams as fast as it is read (bench/long-upstream.ts: 100 M tokens, so it never ends within
 * the run). The built gateway runs the full pipeline (a fresh database on the local Postgres, Redis limits
 * under a key prefix of its own); the unread streams use the master key on model `long`, the probe a virtual key
 * on model `bench` (the ordinary fake, bench/upstream.ts), one non-streamed call after the other.
 *
 * 1. warm-up, then the probe's latency with no unread stream (`--probe-seconds`), and the gateway's RSS;
 * 2. the unread streams are opened (raw sockets, paused: nothing is read); the probe runs while they fill the
 *    sockets' buffers (until the long upstream's writes are all blocked and it wrote nothing for a second, at
 *    most `--fill-max-seconds`), then for `--hold-seconds` with the streams held back; the gateway's RSS is
 *    sampled every 250 ms throughout (the peak is reported);
 * 3. the RSS growth (peak minus before) and the probe's p99 difference in both phases are printed, with the
 *    bytes the long upstream could write (what the sockets' kernel buffers and the gateway took).
 *
 *   npm run build -w services/gateway
 *   npx tsx bench/unread-streams.ts [--streams 40] [--probe-seconds 8] [--fill-max-seconds 20]
 *     [--hold-seconds 8]
 *
 * Targets: RSS growth ≤ +100 MiB, probe p99 ≤ +50 ms over the run without unread streams. Under 2 minutes.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { openUnreadStream, type UnreadStream } from "../test/helpers/unread-stream.js";
import { memoryKiB, readyLine, repoRoot, type Service, spawnService } from "./lib/children.js";
import { mib, ms, signedMs } from "./lib/format.js";
import { startFullPipelineGateway } from "./lib/full-pipeline.js";
import { completionBody } from "./lib/load.js";
import { summarize } from "./lib/stats.js";

const { values: flags } = parseArgs({
  options: {
    streams: { type: "string", default: "40" },
    "fill-max-seconds": { type: "string", default: "20" },
    "hold-seconds": { type: "string", default: "8" },
    "probe-seconds": { type: "string", default: "8" },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
    redis: { type: "string", default: "redis://127.0.0.1:6379" },
  },
});
const streamCount = Number(flags.streams);
const masterKey = `sk-bench-master-${randomBytes(8).toString("hex")}`;
const upstreamKey = "sk-bench-upstream-key";
const say = (line: string) =>
  process.stderr.write(`unread-streams [${new Date().toISOString().slice(11, 19)}]: ${line}\n`);
const services: Service[] = [];
const clients: UnreadStream[] = [];

/** The gateway's config: `bench` at the ordinary fake, `long` at the endless one. */
function writeConfig(benchUrl: string, longUrl: string): string {
  const entry = (name: string, url: string) =>
    `  - model_name: ${name}\n    litellm_params:\n      model: openai/fake-model\n      api_base: ${url}\n      api_key: ${upstreamKey}\n`;
  const path = join(mkdtempSync(join(tmpdir(), "unread-streams-")), "gateway.yaml");
  writeFileSync(path, `model_list:\n${entry("bench", benchUrl)}${entry("long", longUrl)}`);
  return path;
}

/** Non-streamed calls one after the other for `seconds`; their latencies, ms. */
async function probe(origin: string, key: string, seconds: number): Promise<number[]> {
  const samples: number[] = [];
  const body = completionBody("bench");
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    const started = performance.now();
    const res = await fetch(`${origin}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body,
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`the probe's call answered ${res.status}`);
    samples.push(performance.now() - started);
  }
  return samples;
}

let dropDatabase: (() => Promise<void>) | undefined;
try {
  const began = performance.now();
  const upstream = spawnService("upstream", {
    entry: "bench/upstream.ts",
    env: { ...process.env, BENCH_UPSTREAM_API_KEY: upstreamKey },
  });
  services.push(upstream);
  const long = spawnService("long-upstream", { entry: "bench/long-upstream.ts", env: process.env });
  services.push(long);
  const benchUrl = (await readyLine<{ ready: true; url: string }>(upstream)).url;
  const longUrl = (await readyLine<{ ready: true; url: string }>(long)).url;
  let longState = { bytesWritten: 0, blocked: 0 };
  long.child.stdout?.on("data", (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").trim().split("\n")) {
      if (line.startsWith('{"bytesWritten"')) longState = JSON.parse(line);
    }
  });

  const gateway = await startFullPipelineGateway(
    "gateway",
    {
      port: 0,
      masterKey,
      upstreamUrl: benchUrl,
      upstreamKey,
      config: writeConfig(benchUrl, longUrl),
      redisKeyPrefix: `unread-${process.pid}:`,
    },
    { adminUrl: String(flags.postgres), databasePrefix: "unreadstreams", redisUrl: String(flags.redis) },
    { checkout: repoRoot },
  );
  services.push(gateway.service);
  dropDatabase = () => gateway.database.drop();
  const { origin, key } = gateway;
  const pid = gateway.service.pid;

  await probe(origin, key, 2); // warm-up
  const quiet = summarize(await probe(origin, key, Number(flags["probe-seconds"])));
  await sleep(500);
  const rssBefore = memoryKiB(pid).rss;
  say(
    `no unread stream: probe p50 ${ms(quiet.p50)}, p99 ${ms(quiet.p99)} (${quiet.count} calls); RSS ${mib(rssBefore)}`,
  );

  const body = {
    model: "long",
    messages: [{ role: "user", content: "Write forever." }],
    stream: true,
    max_tokens: 1_000_000_000,
  };
  for (let i = 0; i < streamCount; i++) {
    clients.push(
      await openUnreadStream(origin, "/v1/chat/completions", { authorization: `Bearer ${masterKey}` }, body),
    );
  }
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, memoryKiB(pid).rss);
  }, 250);
  // The fill: until every stream is held back (the long upstream's writes all blocked, nothing more written
  // over a second) or --fill-max-seconds, the gateway relays what the sockets' kernel buffers take.
  const fillStarted = performance.now();
  let held = false;
  let lastBytes = -1;
  const watcher = setInterval(() => {
    held = longState.blocked === streamCount && longState.bytesWritten === lastBytes;
    lastBytes = longState.bytesWritten;
  }, 1000);
  const fillSamples: number[] = [];
  const fillUntil = fillStarted + Number(flags["fill-max-seconds"]) * 1000;
  while (!held && performance.now() < fillUntil) fillSamples.push(...(await probe(origin, key, 0.25)));
  clearInterval(watcher);
  const fillSeconds = (performance.now() - fillStarted) / 1000;
  const fill = summarize(fillSamples);
  const holdSeconds = Number(flags["hold-seconds"]);
  const busy = summarize(await probe(origin, key, holdSeconds));
  clearInterval(sampler);
  const rssEnd = memoryKiB(pid).rss;
  const upstreamBytes = longState.bytesWritten;
  const blocked = longState.blocked;
  for (const client of clients) client.socket.destroy();

  const growth = rssPeak - rssBefore;
  const added = busy.p99 - quiet.p99;
  const fillAdded = fill.p99 - quiet.p99;
  const lines = [
    `streams: ${streamCount} unread (master key, model long); probe: one call at a time (virtual key, model bench)`,
    `RSS: ${mib(rssBefore)} before, peak ${mib(rssPeak)} during, ${mib(rssEnd)} at the end: growth ${mib(growth)} (target ≤ +100 MiB: ${growth <= 100 * 1024 ? "pass" : "miss"})`,
    `probe without unread streams: p50 ${ms(quiet.p50)}, p99 ${ms(quiet.p99)}, ${quiet.count} calls`,
    `probe while the streams fill the sockets' buffers (${fillSeconds.toFixed(1)} s${held ? "" : ", not all held back by then"}): p50 ${ms(fill.p50)}, p99 ${ms(fill.p99)}, ${fill.count} calls: p99 ${signedMs(fillAdded)} (target ≤ +50 ms: ${fillAdded <= 50 ? "pass" : "miss"})`,
    `probe with the ${streamCount} streams held back, ${holdSeconds} s: p50 ${ms(busy.p50)}, p99 ${ms(busy.p99)}, ${busy.count} calls: p99 ${signedMs(added)} (target ≤ +50 ms: ${added <= 50 ? "pass" : "miss"})`,
    `long upstream: ${(upstreamBytes / 1048576).toFixed(1)} MiB written in all (${(upstreamBytes / 1048576 / streamCount).toFixed(2)} MiB a stream), ${blocked} of ${streamCount} streams waiting for drain at the end`,
    `run time: ${((performance.now() - began) / 1000).toFixed(0)} s`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  for (const client of clients) client.socket.destroy();
  for (const service of services.reverse()) await service.stop(3000);
  await dropDatabase?.().catch(() => undefined);
}
