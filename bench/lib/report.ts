/**
 * Turns the benchmark's measurements into the console tables and bench/RESULTS.md, with the targets of
 * docs/architecture.md ("Targets") beside the figures. A hand-written analysis between the markers {@link ANALYSIS_START} and
 * {@link ANALYSIS_END} in an existing RESULTS.md is kept across runs.
 */
import { existsSync, readFileSync } from "node:fs";
import { mib, ms, pct, signedMs, markdownTable as table } from "./format.js";
import { notes } from "./notes.js";
import { cpuSection, gcSection, profileSection } from "./report-sections.js";
import type { BenchResults, LoadResult, PacedResult, PacedRow } from "./results.js";
import { scalingSection } from "./scaling-report.js";

export const ANALYSIS_START = "<!-- analysis:start (kept when the benchmark rewrites this file) -->";
export const ANALYSIS_END = "<!-- analysis:end -->";

/** One row of the targets table. */
interface Verdict {
  target: string;
  measured: string;
  result: "pass" | "miss" | "not measured";
}

function find<T extends { target: string }>(rows: T[], target: string, rate?: number): T | undefined {
  return rows.find(
    (r) => r.target === target && (rate === undefined || (r as { rate?: number }).rate === rate),
  );
}

/** Added latency of `target` over `upstream` at a rate: differences of percentiles. */
function added(rows: Array<PacedResult | (LoadResult & { rate: number })>, target: string, rate: number) {
  const base = find(rows, "upstream", rate);
  const row = find(rows, target, rate);
  if (base === undefined || row === undefined) return { p50: Number.NaN, p99: Number.NaN };
  return { p50: row.latency.p50 - base.latency.p50, p99: row.latency.p99 - base.latency.p99 };
}

function throughputRatio(r: BenchResults, target: string, over: string): number {
  const gateway = find(r.saturation, target)?.rps ?? Number.NaN;
  const base = find(r.saturation, over)?.rps ?? Number.NaN;
  return gateway / base;
}

/**
 * RSS trend over the soak, from the samples taken after the first minute (warm-up: JIT, pools, caches): the
 * least-squares line through them, so one noisy sample at either end cannot decide the verdict. `growth` is the
 * line's rise from the first to the last of those samples, KiB; `mean`, `min`, `max` are KiB; `from`/`to` are
 * the seconds they span and `seconds` the soak's whole length.
 */
function soakTrend(
  r: BenchResults,
):
  | { growth: number; mean: number; min: number; max: number; from: number; to: number; seconds: number }
  | undefined {
  const samples = r.soak.filter(([t]) => t >= 60);
  if (samples.length < 3) return undefined;
  const n = samples.length;
  const meanT = samples.reduce((a, [t]) => a + t, 0) / n;
  const mean = samples.reduce((a, [, kib]) => a + kib, 0) / n;
  let num = 0;
  let den = 0;
  for (const [t, kib] of samples) {
    num += (t - meanT) * (kib - mean);
    den += (t - meanT) ** 2;
  }
  const slope = den === 0 ? 0 : num / den;
  const first = samples[0]![0];
  const last = samples[n - 1]![0];
  const values = samples.map(([, kib]) => kib);
  return {
    growth: slope * (last - first),
    mean,
    min: Math.min(...values),
    max: Math.max(...values),
    from: first,
    to: last,
    seconds: r.soak[r.soak.length - 1]![0],
  };
}

/** The targets (docs/architecture.md), row by row, for one gateway target (the soak row only for the judged one). */
export function verdicts(r: BenchResults, gateway: string): Verdict[] {
  const at1000 = added(r.paced, gateway, 1000);
  const has1000 = find(r.paced, gateway, 1000) !== undefined;
  const ratio = throughputRatio(r, gateway, "passthrough");
  const overPeer = throughputRatio(r, gateway, "portkey");
  const growth = gateway === r.judged ? soakTrend(r) : undefined;
  const flat = growth !== undefined && growth.growth <= Math.max(0.05 * growth.mean, 10 * 1024);
  const judge = (ok: boolean, measurable: boolean) => (measurable ? (ok ? "pass" : "miss") : "not measured");
  return [
    {
      target: "added latency p50 ≤ 0.5 ms at 1,000 req/s",
      measured: has1000 ? signedMs(at1000.p50) : "not run (add 1000 to --rates)",
      result: judge(at1000.p50 <= 0.5, has1000),
    },
    {
      target: "added latency p99 ≤ 2 ms at 1,000 req/s",
      measured: has1000 ? signedMs(at1000.p99) : "not run (add 1000 to --rates)",
      result: judge(at1000.p99 <= 2, has1000),
    },
    {
      target: "throughput at saturation ≥ 50 % of the bare pass-through proxy",
      measured: `${pct(ratio)} of bare${Number.isFinite(overPeer) ? `; ${pct(overPeer)} of Portkey's gateway (the peer, not judged)` : ""}`,
      result: judge(ratio >= 0.5, Number.isFinite(ratio)),
    },
    {
      target: "RSS flat over a 10-minute soak",
      measured:
        growth === undefined
          ? gateway === r.judged
            ? r.soak.length > 0
              ? "soak too short for a trend: fewer than 3 samples after the first minute (--soak 600)"
              : "no soak in this run (--soak 600)"
            : "soak runs on the judged gateway only"
          : `fitted trend ${growth.growth >= 0 ? "+" : ""}${mib(growth.growth)} from ${growth.from} s to ${growth.to} s of ${Math.round(growth.seconds)} s (samples ${mib(growth.min)}–${mib(growth.max)}, mean ${mib(growth.mean)})`,
      result:
        growth === undefined
          ? "not measured"
          : growth.seconds >= 600
            ? flat
              ? "pass"
              : "miss"
            : "not measured",
    },
    {
      target: "budgets: no overspend beyond in-flight reservations; revocation within 2 s",
      measured: "correctness targets, covered by the gateway's tests, not by this benchmark",
      result: "not measured",
    },
  ];
}

/** Per-round added p99 of `row` over the upstream's same round, when the rows have rounds. */
function addedByRound(rows: Array<PacedResult | (LoadResult & { rate: number })>, row: PacedResult): string {
  const base = find(rows, "upstream", row.rate) as PacedRow | undefined;
  const own = (row as PacedRow).rounds;
  if (base === undefined || own === undefined || row.target === "upstream") return "";
  return own.map((r, i) => signedMs(r.latency.p99 - (base.rounds[i]?.latency.p99 ?? Number.NaN))).join(", ");
}

function latencyRows(rows: Array<PacedResult | (LoadResult & { rate: number })>): string[][] {
  return rows.map((row) => {
    const baseline = row.target === "upstream";
    const extra = added(rows, row.target, row.rate);
    return [
      String(row.rate),
      row.target,
      row.rps.toFixed(0),
      ms(row.latency.p50),
      ms(row.latency.p99),
      baseline ? "(baseline)" : signedMs(extra.p50),
      baseline ? "(baseline)" : signedMs(extra.p99),
      ...("lag" in row ? [addedByRound(rows, row), ms(row.lag.p99)] : []),
      String(row.non2xx + row.errors),
    ];
  });
}

const latencyHead = (paced: boolean) => [
  "rate (req/s)",
  "target",
  "achieved (req/s)",
  "p50",
  "p99",
  "added p50",
  "added p99",
  ...(paced ? ["added p99 by round", "generator lag p99"] : []),
  "failed",
];

/** The figures as tables (console and RESULTS.md share them). */
export function figures(r: BenchResults): string {
  const parts: string[] = [];
  parts.push(`### Added latency at fixed rates (open loop, undici; the targets are judged on this)\n`);
  parts.push(table(latencyHead(true), latencyRows(r.paced)));
  if (r.gc.length > 0) parts.push(`\n${gcSection(r)}`);
  if (r.autocannonRate.length > 0) {
    parts.push(`\n### The same rates with autocannon \`overallRate\` (bursty pacing, see notes)\n`);
    parts.push(table(latencyHead(false), latencyRows(r.autocannonRate)));
  }
  parts.push(
    `\n### Throughput at saturation (autocannon, ${r.settings.connections} connections, closed loop)\n`,
  );
  const sat = (name: string) => find(r.saturation, name)?.rps ?? Number.NaN;
  const gatewayNames = r.gateways.map((g) => g.name);
  parts.push(
    table(
      [
        "target",
        "req/s (median of rounds)",
        "rounds",
        "p50",
        "p99",
        ...gatewayNames.map((g) => `${g} ÷ this`),
        "failed",
      ],
      r.saturation.map((s) => [
        s.target,
        s.rps.toFixed(0),
        s.rounds.map((v) => v.toFixed(0)).join(", "),
        ms(s.latency.p50),
        ms(s.latency.p99),
        ...gatewayNames.map((g) => (s.target === g ? "" : pct(sat(g) / s.rps))),
        String(s.errors),
      ]),
    ),
  );
  if (r.cpu.length > 0) parts.push(`\n${cpuSection(r)}`);
  if (r.streams.length > 0) {
    const base = find(r.streams, "upstream");
    parts.push(`\n### Streaming: time to first SSE byte at the client\n`);
    parts.push(
      table(
        [
          "target",
          "sequential TTFT p50",
          "p99",
          "added p50",
          "added p99",
          "stream total p50",
          `${r.streams[0]?.concurrency ?? ""} concurrent TTFT p50`,
          "p99",
          "added p50",
          "failed",
        ],
        r.streams.map((s) => {
          const isBase = s.target === "upstream" || base === undefined;
          return [
            s.target,
            ms(s.sequentialTtft.p50),
            ms(s.sequentialTtft.p99),
            isBase ? "(baseline)" : signedMs(s.sequentialTtft.p50 - base.sequentialTtft.p50),
            isBase ? "(baseline)" : signedMs(s.sequentialTtft.p99 - base.sequentialTtft.p99),
            ms(s.sequentialTotal.p50),
            ms(s.concurrentTtft.p50),
            ms(s.concurrentTtft.p99),
            isBase ? "(baseline)" : signedMs(s.concurrentTtft.p50 - base.concurrentTtft.p50),
            String(s.failures),
          ];
        }),
      ),
    );
  }
  parts.push(`\n### Gateway memory (/proc/<pid>/status)\n`);
  parts.push(
    table(
      ["gateway", "when", "VmRSS", "VmHWM (peak)"],
      r.rss.map((s) => [s.process, s.label, mib(s.rss), mib(s.peak)]),
    ),
  );
  if (r.soak.length > 0) {
    parts.push(
      `\nSoak (${r.judged} at ${r.settings.soakRate} req/s): ${r.soak.map(([t, kib]) => `${t}s ${mib(kib)}`).join(", ")}`,
    );
  }
  return parts.join("\n");
}

/**
 * The targets (docs/architecture.md): measured on every gateway target, judged on {@link BenchResults.judged}.
 * Each other gateway (the before of `--baseline` first) gets its own figure and result columns beside it.
 */
export function targetsTable(r: BenchResults): string {
  const others = r.gateways
    .map((g) => g.name)
    .filter((name) => name !== r.judged)
    .sort((a, b) => Number(b.endsWith("-before")) - Number(a.endsWith("-before")));
  const judged = verdicts(r, r.judged);
  const rest = others.map((name) => verdicts(r, name));
  return table(
    [
      "target (docs/architecture.md)",
      `${r.judged} (judged)`,
      "result",
      ...others.flatMap((o) => [o, "result"]),
    ],
    judged.map((v, i) => [
      v.target,
      v.measured,
      v.result,
      ...rest.flatMap((row) => [row[i]?.measured ?? "", row[i]?.result ?? ""]),
    ]),
  );
}

/** The whole RESULTS.md, keeping a hand-written analysis block from `previousFile` if there is one. */
export function resultsMarkdown(r: BenchResults, previousFile: string): string {
  let analysis = `${ANALYSIS_START}\n${ANALYSIS_END}`;
  if (existsSync(previousFile)) {
    const old = readFileSync(previousFile, "utf8");
    const start = old.indexOf(ANALYSIS_START);
    const end = old.indexOf(ANALYSIS_END);
    if (start >= 0 && end > start) analysis = old.slice(start, end + ANALYSIS_END.length);
  }
  const settings = Object.entries(r.settings)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
  return [
    "# Gateway benchmark results",
    "",
    `Written by \`npm run bench\` (bench/run.ts). Rerun: \`${r.command}\`; \`npm run bench -- --help\` lists the flags.`,
    "",
    `- Date: ${r.date}`,
    `- Machine: ${r.machine.nproc} CPUs (${r.machine.cpu}), ${r.machine.memGiB.toFixed(1)} GiB RAM, ${r.machine.os}; Node ${r.machine.node}`,
    `- Load average (1 min) at start and end: ${r.loadAverage[0].toFixed(2)}, ${r.loadAverage[1].toFixed(2)} (a shared machine: other work competes for the cores)`,
    ...r.gateways.map((g) => `- ${g.name}: ${g.mode}`),
    `- Settings: ${settings}`,
    `- Run time: ${r.seconds.toFixed(0)} s${r.phases === undefined ? "" : ` (${r.phases.map(([name, sec]) => `${name} ${sec.toFixed(0)} s`).join(", ")})`}`,
    "",
    "## Targets (docs/architecture.md)",
    "",
    targetsTable(r),
    "",
    "## Figures",
    "",
    figures(r),
    "",
    scalingSection(r.scaling),
    profileSection(r),
    "## Analysis",
    "",
    analysis,
    "",
    notes,
  ].join("\n");
}
