/**
 * Guardrail overhead: the same load on two gateways in one run, one with guardrails off (a policy with no
 * guardrail) and one with the shipped policy (built-in PII recognizers, prompt injection through a scanner fake
 * answering in a fixed time), each gateway, the upstream fake and the scanner fake in their own process.
 *
 *   npx tsx bench/guardrails.ts [--requests 2000] [--rounds 3] [--scanner-ms 2] [--rate 200] [--seconds 5] [--profile]
 *
 * `--profile` runs both gateways under `node --cpu-prof` and prints where each spent its time.
 *
 * Reports, per gateway: sequential latency p50/p99 (one request at a time, so nothing queues), latency at a
 * fixed rate, and the gateway's CPU per request (/proc/<pid>/stat). "Added" is on minus off; "excluding
 * inference" also subtracts the scanner's fixed answer time. The request is a short chat turn with an email
 * address (masked by the guardrail) and about 1 KB of text.
 */
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Registry } from "prom-client";
import { Pool } from "undici";
import { chatRequestTexts } from "../services/gateway/src/endpoints/chat-completions/texts.js";
import { GuardrailEngine } from "../services/gateway/src/guardrails/engine.js";
import { createGuardrailMetrics } from "../services/gateway/src/guardrails/metrics.js";
import { builtInAnalyzer } from "../services/gateway/src/guardrails/pii/recognizers.js";
import { loadGuardrailPolicy } from "../services/gateway/src/guardrails/policy/load-policy.js";
import { startFakeScanner } from "../test/fixtures/scanner-service.js";
import { readyLine, repoRoot, type Service, spawnGateway, spawnService } from "./lib/children.js";
import { processCpuMs } from "./lib/cpu.js";
import { benchGatewayEnv } from "./lib/gateway-env.js";
import { summarizeProfile } from "./lib/profile.js";
import { median, summarize } from "./lib/stats.js";
import { spawnUpstream } from "./lib/upstream.js";

const { values: flags } = parseArgs({
  options: {
    requests: { type: "string", default: "2000" },
    rounds: { type: "string", default: "3" },
    "scanner-ms": { type: "string", default: "2" },
    rate: { type: "string", default: "200" },
    seconds: { type: "string", default: "5" },
    profile: { type: "boolean", default: false },
  },
});

// Child mode (BENCH_SCANNER_MS set by the parent): the scanner fake in its own process, answering every scan in
// that many ms.
if (process.env.BENCH_SCANNER_MS !== undefined) {
  const scanner = await startFakeScanner({ latencyMs: Number(process.env.BENCH_SCANNER_MS) });
  process.stdout.write(`${JSON.stringify({ ready: true, url: scanner.url })}\n`);
  process.once("SIGTERM", () => void scanner.close().then(() => process.exit(0)));
} else {
  await main();
}

async function main(): Promise<void> {
  const requests = Number(flags.requests);
  const rounds = Number(flags.rounds);
  const scannerMs = Number(flags["scanner-ms"]);
  const masterKey = "sk-bench-guardrails-master-key";
  const upstreamKey = "sk-bench-upstream";
  const services: Service[] = [];
  const say = (line: string) => process.stderr.write(`${line}\n`);
  try {
    const up = await spawnUpstream(services, upstreamKey);
    const scanner = spawnService("scanner", {
      entry: "bench/guardrails.ts",
      env: { ...process.env, BENCH_SCANNER_MS: String(scannerMs) },
    });
    services.push(scanner);
    const sc = await readyLine<{ ready: true; url: string }>(scanner);

    const profileDir = mkdtempSync(join(tmpdir(), "bench-guardrails-profiles-"));
    const offPolicy = join(mkdtempSync(join(tmpdir(), "bench-guardrails-")), "policy.yaml");
    writeFileSync(offPolicy, "guardrails: {}\n");
    const startGateway = async (name: string, env: Record<string, string>) => {
      const { service, origin } = await spawnGateway(
        name,
        {
          // spawnGateway picks the port.
          ...benchGatewayEnv({ port: 0, masterKey, upstreamUrl: up.url, upstreamKey }),
          PII_ANALYZER_API_BASE: "",
          ...env,
        },
        {
          nodeFlags: flags.profile
            ? ["--cpu-prof", "--cpu-prof-dir", join(profileDir, name.replace(/ /g, "-"))]
            : [],
        },
      );
      services.push(service);
      return { name, service, origin };
    };
    say("starting the upstream fake, the scanner fake and two gateways (guardrails off / on), from source");
    const gateways = [
      await startGateway("guardrails off", { GUARDRAIL_POLICY: offPolicy, GUARD_SCANNER_API_BASE: "" }),
      await startGateway("guardrails on", {
        GUARDRAIL_POLICY: join(repoRoot, "litellm", "guardrails", "policy.yaml"),
        GUARD_SCANNER_API_BASE: sc.url,
      }),
    ];
    const body = JSON.stringify({
      model: "bench",
      max_tokens: 16,
      messages: [
        { role: "system", content: "You are a helpful assistant for the billing team. Answer briefly." },
        {
          role: "user",
          content: `Hi, I am jane.doe@example.org. ${"My invoice from last month shows a charge I do not recognise, can you explain the line items and what the proration means? ".repeat(7)}`,
        },
      ],
    });
    const engineFigures = await engineAlone(body, requests * 5);
    say(
      `engine alone (built-in PII on this body, in process): p50 ${engineFigures.p50.toFixed(1)} µs, p99 ${engineFigures.p99.toFixed(1)} µs, CPU ${engineFigures.cpu.toFixed(1)} µs per call`,
    );
    const headers = { "content-type": "application/json", authorization: `Bearer ${masterKey}` };
    const check = await fetch(`${gateways[1]!.origin}/v1/chat/completions`, {
      method: "POST",
      headers,
      body,
    });
    say(
      `guardrails on answers ${check.status}; decisions: ${check.headers.get("x-guardrail-decisions") ?? "(none: the guard is not wired)"}`,
    );

    const sequential: Record<string, { p50: number[]; p99: number[]; cpu: number[] }> = {};
    const paced: Record<string, { p50: number[]; p99: number[] }> = {};
    for (const g of gateways) {
      sequential[g.name] = { p50: [], p99: [], cpu: [] };
      paced[g.name] = { p50: [], p99: [] };
      await sequentialRun(g.origin, headers, body, 300); // warm-up
    }
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? gateways : [...gateways].reverse();
      for (const g of order) {
        const cpuBefore = processCpuMs(g.service.pid);
        const lat = summarize(await sequentialRun(g.origin, headers, body, requests));
        const cpu = (processCpuMs(g.service.pid) - cpuBefore) / requests;
        sequential[g.name]!.p50.push(lat.p50);
        sequential[g.name]!.p99.push(lat.p99);
        sequential[g.name]!.cpu.push(cpu * 1000);
        const p = summarize(
          await pacedRun(g.origin, headers, body, Number(flags.rate), Number(flags.seconds)),
        );
        paced[g.name]!.p50.push(p.p50);
        paced[g.name]!.p99.push(p.p99);
        say(
          `round ${round + 1} ${g.name}: sequential p50 ${lat.p50.toFixed(3)} ms, p99 ${lat.p99.toFixed(3)} ms, CPU ${(cpu * 1000).toFixed(0)} µs/req`,
        );
      }
    }
    const row = (name: string) => {
      const s = sequential[name]!;
      const p = paced[name]!;
      return {
        p50: median(s.p50),
        p99: median(s.p99),
        cpu: median(s.cpu),
        rp50: median(p.p50),
        rp99: median(p.p99),
      };
    };
    const off = row("guardrails off");
    const on = row("guardrails on");
    const f = (v: number) => v.toFixed(3);
    const lines = [
      `Guardrail overhead (median of ${rounds} rounds; ${requests} sequential requests per round; ${flags.rate} req/s for ${flags.seconds} s; scanner fake answers in ${scannerMs} ms)`,
      "",
      "| gateway | sequential p50 ms | sequential p99 ms | CPU µs/request | p50 ms at rate | p99 ms at rate |",
      "|---|---|---|---|---|---|",
      `| guardrails off | ${f(off.p50)} | ${f(off.p99)} | ${off.cpu.toFixed(0)} | ${f(off.rp50)} | ${f(off.rp99)} |`,
      `| guardrails on | ${f(on.p50)} | ${f(on.p99)} | ${on.cpu.toFixed(0)} | ${f(on.rp50)} | ${f(on.rp99)} |`,
      `| added | ${f(on.p50 - off.p50)} | ${f(on.p99 - off.p99)} | ${(on.cpu - off.cpu).toFixed(0)} | ${f(on.rp50 - off.rp50)} | ${f(on.rp99 - off.rp99)} |`,
      `| added, excluding the scanner's ${scannerMs} ms | ${f(on.p50 - off.p50 - scannerMs)} | ${f(on.p99 - off.p99 - scannerMs)} | | ${f(on.rp50 - off.rp50 - scannerMs)} | ${f(on.rp99 - off.rp99 - scannerMs)} |`,
      "",
      `The PII check alone (built-in recognizers, in process, ${requests * 5} calls on this body): p50 ${engineFigures.p50.toFixed(1)} µs, p99 ${engineFigures.p99.toFixed(1)} µs, CPU ${engineFigures.cpu.toFixed(1)} µs per call.`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    if (flags.profile) {
      for (const s of [...services].reverse()) await s.stop(10_000);
      for (const g of gateways) {
        const dir = join(profileDir, g.name.replace(/ /g, "-"));
        const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
        if (file === undefined) continue;
        const summary = summarizeProfile(join(dir, file), 12);
        process.stdout.write(`\n${g.name}: busy ${summary.busyMs.toFixed(0)} ms\n`);
        for (const a of summary.areas) process.stdout.write(`  ${(a.share * 100).toFixed(1)}% ${a.name}\n`);
      }
    }
  } finally {
    for (const s of services.reverse()) await s.stop(2000);
  }
}

/** The engine's input check with built-in PII only (the shipped policy's pii section), in process; µs. */
async function engineAlone(body: string, calls: number) {
  const { policy } = loadGuardrailPolicy({
    policyPath: join(repoRoot, "litellm", "guardrails", "policy.yaml"),
  });
  const engine = new GuardrailEngine({
    policy: { pii: policy.pii },
    analyzer: builtInAnalyzer,
    scanner: undefined,
    metrics: createGuardrailMetrics(new Registry()),
  });
  const parsed = JSON.parse(body) as { messages: Array<{ role: string; content: string }> };
  for (let i = 0; i < 2000; i++) {
    await engine.checkInput(
      {
        body: { messages: parsed.messages.map((m) => ({ ...m })) },
        auth: { kind: "master" },
        decisions: [],
      },
      chatRequestTexts,
    );
  }
  const samples = new Float64Array(calls);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    const messages = parsed.messages.map((m) => ({ ...m }));
    const t0 = performance.now();
    await engine.checkInput(
      { body: { messages }, auth: { kind: "master" }, decisions: [] },
      chatRequestTexts,
    );
    samples[i] = (performance.now() - t0) * 1000;
  }
  const used = process.cpuUsage(cpu0);
  const s = summarize(samples);
  return { p50: s.p50, p99: s.p99, cpu: (used.user + used.system) / calls };
}

/** One request at a time; latencies in ms. */
async function sequentialRun(origin: string, headers: Record<string, string>, body: string, n: number) {
  const pool = new Pool(origin, { connections: 1 });
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await pool.request({ path: "/v1/chat/completions", method: "POST", headers, body });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${origin} answered ${res.statusCode}`);
    out[i] = performance.now() - t0;
  }
  await pool.close();
  return out;
}

/** Open loop at `rate` req/s for `seconds`; latencies in ms. */
async function pacedRun(
  origin: string,
  headers: Record<string, string>,
  body: string,
  rate: number,
  seconds: number,
) {
  const pool = new Pool(origin, { connections: 32 });
  const total = Math.round(rate * seconds);
  const start = performance.now();
  const latencies: number[] = [];
  const inflight: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    inflight.push(
      pool.request({ path: "/v1/chat/completions", method: "POST", headers, body }).then(async (res) => {
        await res.body.text();
        if (res.statusCode === 200) latencies.push(performance.now() - t0);
      }),
    );
  }
  await Promise.all(inflight);
  await pool.close();
  return latencies;
}
