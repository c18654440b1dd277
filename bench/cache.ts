/**
 * Response cache benchmark (docs/cache.md; targets: an exact hit adds p50 ≤ 1 ms, p99 ≤ 3 ms at 1,000 req/s).
 * In one run: the fake upstream, a gateway without the cache and a gateway with `litellm_settings.cache: true`
 * (`type: redis` on REDIS_URL, else the in-process LRU), each in its own process, master key, priced model.
 *
 *   npm run bench:cache -- [--rate 1000] [--seconds 5] [--rounds 3] [--warmup 3] [--from-source] [--soak-seconds 20] [--soak-rate 200] [--prompts 400]
 *
 * 1. Hits: the same request at `--rate` for `--seconds` on the cache gateway (every request after the first is an
 *    exact hit: no upstream), beside the same load on the upstream alone and on the gateway without the cache,
 *    `--rounds` rounds in a rotating order, medians reported (as `npm run bench`'s fixed-rate table). A hit
 *    reaches no upstream, so its latency less the bare upstream's (one HTTP round trip to a trivial server) is
 *    what the gateway adds.
 * 2. Soak: `--soak-rate` req/s for `--soak-seconds`, each request one of `--prompts` prompts drawn with a
 *    Zipf-like skew (popular questions come back); reports the hit ratio and the dollars saved from the
 *    gateway's own counters (`litellm_cache_hits_metric_total`, `litellm_cache_misses_metric_total`,
 *    `gateway_cache_saved_spend_usd_total`).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gatewayEntry as prepareGateway } from "./lib/checkout.js";
import { repoRoot, type Service, spawnGateway } from "./lib/children.js";
import { benchGatewayEnv } from "./lib/gateway-env.js";
import { cannon, type Target } from "./lib/load.js";
import { pacedRounds } from "./lib/rounds.js";
import { spawnUpstream } from "./lib/upstream.js";

const { values: flags } = parseArgs({
  options: {
    rate: { type: "string", default: "1000" },
    seconds: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    warmup: { type: "string", default: "3" },
    "from-source": { type: "boolean", default: false },
    "soak-rate": { type: "string", default: "200" },
    "soak-seconds": { type: "string", default: "20" },
    prompts: { type: "string", default: "400" },
  },
});

const masterKey = "sk-bench-cache-master-key";
const upstreamKey = "sk-bench-upstream";
const PRICES =
  "    model_info:\n      input_cost_per_token: 0.0000025\n      output_cost_per_token: 0.00001\n";

/** bench/gateway.yaml with prices (so a hit saves dollars) and, when `cache`, the response cache on. */
function config(cache: boolean): string {
  const base = readFileSync(join(repoRoot, "bench", "gateway.yaml"), "utf8");
  const text = `${base.trimEnd()}\n${PRICES}${cache ? "litellm_settings:\n  cache: true\n  cache_params:\n    type: redis\n    ttl: 600\n" : ""}`;
  const file = join(mkdtempSync(join(tmpdir(), "bench-cache-")), "gateway.yaml");
  writeFileSync(file, text);
  return file;
}

/** A counter's sum over its series in a Prometheus text exposition. */
function counter(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.split(" ").at(-1));
  }
  return sum;
}

const services: Service[] = [];
const say = (line: string) => process.stderr.write(`${line}\n`);
try {
  const up = await spawnUpstream(services, upstreamKey);
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `bench-cache-${process.pid}:`;
  const start = async (name: string, cache: boolean) => {
    const env = benchGatewayEnv(
      { port: 0, masterKey, upstreamUrl: up.url, upstreamKey, config: config(cache), redisKeyPrefix: prefix },
      "",
      cache ? redisUrl : "",
    );
    const { service, origin } = await spawnGateway(name, env, { entry: gatewayEntry });
    services.push(service);
    return origin;
  };
  const gatewayEntry = prepareGateway(Boolean(flags["from-source"]), say);
  say("starting the upstream fake and two gateways (cache off / on)");
  const off = await start("cache off", false);
  const on = await start("cache on", true);
  const headers = { "content-type": "application/json", authorization: `Bearer ${masterKey}` };
  const target = (name: string, origin: string, path: string): Target => ({
    name,
    origin,
    path,
    headers: name === "upstream" ? { ...headers, authorization: `Bearer ${upstreamKey}` } : headers,
    model: name === "upstream" ? "fake-model" : "bench",
  });
  const rate = Number(flags.rate);
  const seconds = Number(flags.seconds);
  const targets = [
    target("upstream", up.url.replace(/\/v1$/, ""), "/v1/chat/completions"),
    target("gateway, cache off", off, "/v1/chat/completions"),
    target("gateway, exact hits", on, "/v1/chat/completions"),
  ];
  // Warm-up, closed loop as npm run bench does, so JIT compilation and the first heap growth are not in the tail
  // (and the one miss that stores the entry the hits read).
  const warmup = Number(flags.warmup);
  for (const t of targets) if (warmup > 0) await cannon(t, { seconds: warmup, connections: 16 });
  // Rounds in a rotating order, medians per target (bench/lib/rounds.ts, as npm run bench's fixed-rate table).
  const gateways = new Set(targets.filter((t) => t.name !== "upstream").map((t) => t.name));
  const { paced, gc } = await pacedRounds(targets, gateways, {
    rates: [rate],
    rounds: Number(flags.rounds),
    duration: seconds,
    say,
  });
  const base = paced.find((r) => r.target === "upstream")!;
  const added = (v: number, b: number) => (v === b ? "(baseline)" : `+${(v - b).toFixed(3)}`);
  const rows = paced.map(
    (r) =>
      `| ${r.target} | ${rate} | ${r.latency.p50.toFixed(3)} | ${r.latency.p99.toFixed(3)} | ${added(r.latency.p50, base.latency.p50)} | ${added(r.latency.p99, base.latency.p99)} | ${r.rounds.map((x) => x.latency.p99.toFixed(3)).join(", ")} | ${r.ok} | ${r.non2xx + r.errors} | ${r.lag.p99.toFixed(2)} |`,
  );

  // Soak: many prompts, popular ones asked again.
  const before = await (await fetch(`${on}/metrics`)).text();
  const prompts = Number(flags.prompts);
  const soakRate = Number(flags["soak-rate"]);
  const soakSeconds = Number(flags["soak-seconds"]);
  const total = soakRate * soakSeconds;
  const pick = () => Math.min(prompts - 1, Math.floor(prompts * Math.random() ** 3));
  // max_tokens above the fake's echo: an answer cut at its cap (`finish_reason: length`) is never stored.
  const body = (i: number) =>
    JSON.stringify({
      model: "bench",
      max_tokens: 256,
      messages: [{ role: "user", content: `soak question ${i} ${"about the invoice ".repeat(8)}` }],
    });
  const sent: Array<Promise<void>> = [];
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = t0 + (i * 1000) / soakRate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    sent.push(
      fetch(`${on}/v1/chat/completions`, { method: "POST", headers, body: body(pick()) }).then(
        async (res) => {
          await res.arrayBuffer();
        },
      ),
    );
  }
  await Promise.allSettled(sent);
  const after = await (await fetch(`${on}/metrics`)).text();
  const hits =
    counter(after, "litellm_cache_hits_metric_total") - counter(before, "litellm_cache_hits_metric_total");
  const misses =
    counter(after, "litellm_cache_misses_metric_total") -
    counter(before, "litellm_cache_misses_metric_total");
  const saved =
    counter(after, "gateway_cache_saved_spend_usd_total") -
    counter(before, "gateway_cache_saved_spend_usd_total");
  const lines = [
    `Response cache: latency at ${rate} req/s, ${flags.rounds} rounds of ${seconds} s (ms; open loop; medians of the rounds), one process each, Node ${process.version}`,
    "",
    "| target | req/s | p50 ms | p99 ms | added p50 ms | added p99 ms | p99 by round | ok | failed | generator lag p99 ms |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    `GC pauses over those rounds (the gateways' own \`nodejs_gc_duration_seconds\`): ${gc
      .map(
        (g) =>
          `${g.target}: ${Object.entries(g.kinds)
            .filter(([, v]) => v.count > 0)
            .map(([kind, v]) => `${v.count} ${kind} × ${(v.ms / v.count).toFixed(2)} ms`)
            .join(", ")}`,
      )
      .join("; ")}`,
    "",
    `Soak: ${total} requests at ${soakRate} req/s over ${prompts} prompts (Zipf-like skew): ${hits} hits, ${misses} misses, hit ratio ${((100 * hits) / Math.max(1, hits + misses)).toFixed(1)} %, saved $${saved.toFixed(4)} (model priced $2.50 / $10 per 1M tokens)`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  for (const s of services.reverse()) await s.stop(2000);
}
