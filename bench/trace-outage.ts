/**
 * `npm run bench:traces`: what tracing costs the gateway, and what a Langfuse outage costs it. In one run it
 * puts the same fixed-rate load on three gateways side by side, each in its own process: without tracing,
 * tracing to a Langfuse that answers, and tracing to a Langfuse that accepts connections and never answers
 * (the worst outage: every export waits for its timeout). Both Langfuses are the contract fake of
 * test/fixtures/langfuse.ts, in this process. Reports latency (p50/p99, medians of rounds), RSS at the start
 * and end, and the down gateway's `gateway_trace_dropped_total` / `gateway_trace_export_failures_total`.
 * With `--batch-sizes`, one more gateway per size traces to the answering Langfuse with that TRACE_BATCH_SIZE.
 * With `--baseline <checkout>`, one more gateway, run from that checkout's source (the before of a change, its
 * dependencies installed), traces to the answering Langfuse: before and after side by side in one run. With
 * `--thread`, one more traces to it from the trace thread (TRACE_EXPORT_THREAD=true).
 * Writes bench/TRACES.md (or `--output`). `npm run bench:traces -- --help` for the flags.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { startFakeLangfuse } from "../test/fixtures/langfuse.js";
import { memoryKiB, readyLine, repoRoot, type Service, spawnGateway, spawnService } from "./lib/children.js";
import { benchGatewayEnv } from "./lib/gateway-env.js";
import { mergeRounds, type PacedResult, pacedLoad, type Target } from "./lib/load.js";

const { values: flags } = parseArgs({
  options: {
    rate: { type: "string", default: "300" },
    seconds: { type: "string", default: "20" },
    rounds: { type: "string", default: "3" },
    "batch-sizes": { type: "string", default: "" },
    baseline: { type: "string", default: "" },
    thread: { type: "boolean", default: false },
    output: { type: "string", default: "bench/TRACES.md" },
    help: { type: "boolean", default: false },
  },
});
if (flags.help) {
  console.log(`npm run bench:traces -- [--rate 300] [--seconds 20] [--rounds 3]
  --rate      requests per second on each gateway (open loop)
  --seconds   length of one round on one gateway
  --rounds    rounds; each gateway is loaded once per round, in turn (3 × 20 s: a minute of outage)
  --batch-sizes <list>
              also run, for each size, a gateway tracing to the answering Langfuse with that
              TRACE_BATCH_SIZE (spans per export request; the default gateway's is the gateway's own, 64)
  --baseline <checkout>
              also run a gateway from that checkout's source (its node_modules installed) tracing to the
              answering Langfuse ("langfuse-up, baseline")
  --thread    also run a gateway tracing to the answering Langfuse from its trace thread
              (TRACE_EXPORT_THREAD=true: "langfuse-up, thread")
  --output    results file (default bench/TRACES.md)`);
  process.exit(0);
}
const rate = Number(flags.rate);
const seconds = Number(flags.seconds);
const rounds = Number(flags.rounds);
const say = (line: string) => console.log(`[bench:traces] ${line}`);
const services: Service[] = [];
const masterKey = "sk-bench-traces-0123456789abcdef";

async function main(): Promise<void> {
  const upstream = spawnService("upstream", {
    entry: "bench/upstream.ts",
    env: { ...process.env, BENCH_UPSTREAM_API_KEY: "none" },
  });
  services.push(upstream);
  const up = await readyLine<{ ready: true; url: string; port: number }>(upstream);
  const answering = await startFakeLangfuse();
  const hanging = await startFakeLangfuse();
  hanging.setState("hang");

  const startGateway = async (name: string, trace: Record<string, string>, cwd?: string) => {
    const started = await spawnGateway(
      name,
      {
        ...benchGatewayEnv({ port: 0, masterKey, upstreamUrl: up.url, upstreamKey: "none" }),
        LOG_LEVEL: "error",
        // Set (empty) so that a developer's .env cannot turn tracing on behind the benchmark's back.
        TRACE_HOST: "",
        TRACE_PUBLIC_KEY: "",
        TRACE_SECRET_KEY: "",
        ...trace,
      },
      cwd === undefined ? {} : { cwd },
    );
    services.push(started.service);
    return { name, ...started };
  };
  const traceTo = (lf: { url: string; publicKey: string; secretKey: string }) => ({
    TRACE_HOST: lf.url,
    TRACE_PUBLIC_KEY: lf.publicKey,
    TRACE_SECRET_KEY: lf.secretKey,
  });
  say("starting three gateways: no tracing, Langfuse answering, Langfuse hanging");
  const gateways = [
    await startGateway("no-tracing", {}),
    await startGateway("langfuse-up", traceTo(answering)),
    await startGateway("langfuse-down", traceTo(hanging)),
  ];
  for (const size of String(flags["batch-sizes"]).split(",").filter(Boolean)) {
    gateways.push(
      await startGateway(`langfuse-up, batch ${size}`, { ...traceTo(answering), TRACE_BATCH_SIZE: size }),
    );
  }
  if (flags.thread) {
    gateways.push(
      await startGateway("langfuse-up, thread", { ...traceTo(answering), TRACE_EXPORT_THREAD: "true" }),
    );
  }
  if (flags.baseline !== "") {
    gateways.push(
      await startGateway("langfuse-up, baseline", traceTo(answering), resolve(String(flags.baseline))),
    );
  }
  const rssStart = new Map(gateways.map((g) => [g.name, memoryKiB(g.service.pid).rss]));
  const results = new Map<string, PacedResult[]>(gateways.map((g) => [g.name, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const g of gateways) {
      const target: Target = {
        name: g.name,
        origin: g.origin,
        path: "/v1/chat/completions",
        headers: { "content-type": "application/json", authorization: `Bearer ${masterKey}` },
        model: "bench",
      };
      say(`round ${round}/${rounds}: ${g.name} at ${rate} req/s for ${seconds} s`);
      results.get(g.name)?.push(await pacedLoad(target, { rate, seconds }));
    }
  }
  const counters = async (origin: string) => {
    const text = await (await fetch(`${origin}/metrics`)).text();
    const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? 0);
    return {
      dropped: read("gateway_trace_dropped_total"),
      failures: read("gateway_trace_export_failures_total"),
      queued: read("gateway_trace_queue_spans"),
    };
  };
  const rows: string[] = [];
  const base = mergeRounds(results.get("no-tracing") ?? []);
  for (const g of gateways) {
    const row = mergeRounds(results.get(g.name) ?? []);
    const rssEnd = memoryKiB(g.service.pid).rss;
    const c = g.name === "no-tracing" ? undefined : await counters(g.origin);
    rows.push(
      `| ${g.name} | ${row.ok} | ${row.non2xx + row.errors} | ${row.latency.p50.toFixed(2)} | ${row.latency.p99.toFixed(2)} | ${(row.latency.p50 / base.latency.p50).toFixed(2)} | ${(row.latency.p99 / base.latency.p99).toFixed(2)} | ${((rssStart.get(g.name) ?? 0) / 1024).toFixed(0)} → ${(rssEnd / 1024).toFixed(0)} | ${c ? `${c.dropped} / ${c.failures} / ${c.queued}` : "–"} |`,
    );
  }
  const report = `# Tracing and a Langfuse outage: benchmark results

Written by \`npm run bench:traces\` (${new Date().toISOString()}): ${rate} req/s open loop, ${rounds} rounds of
${seconds} s per gateway, taken in turn; latency figures are medians of the rounds (ms, from the load
generator). "langfuse-down" traces to a Langfuse that accepts connections and never answers; "batch N" is
the answering one with TRACE_BATCH_SIZE=N (the others use the gateway's default, 64).

| gateway | 2xx | other | p50 ms | p99 ms | p50 × no-tracing | p99 × no-tracing | RSS MiB start → end | dropped / export failures / queued spans |
|---|---|---|---|---|---|---|---|---|
${rows.join("\n")}

Spans the answering Langfuse received: ${answering.observations.length}.
`;
  writeFileSync(resolve(repoRoot, String(flags.output)), report);
  console.log(report);
  await answering.close();
  await hanging.close();
}

main()
  .catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  })
  .finally(async () => {
    await Promise.all(services.map((s) => s.stop(3000)));
  });
