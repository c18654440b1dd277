/**
 * The scaling tables of RESULTS.md (see scaling.ts for the runs) and their "How to read this" notes. Added latency
 * is the row's percentile minus the upstream's in the same step; throughput is compared with the pass-through's in
 * the same step.
 */

import { ms, pct, signedMs, sizeLabel, markdownTable as table, usPer as us } from "./format.js";
import type { ScaleRow, ScalingResults } from "./results.js";

/** The rows of one step: throughput, its share of the pass-through's, added latency, CPU of the row's own process. */
function stepRows(rows: ScaleRow[], first: string[]): string[][] {
  const base = rows.find((r) => r.target === "upstream");
  const proxy = rows.find((r) => r.target === "passthrough");
  return rows.map((r) => {
    const isBase = r.target === "upstream" || base === undefined;
    const extra = (pick: "p50" | "p99") =>
      isBase || r.paced === undefined || base?.paced === undefined
        ? "(baseline)"
        : signedMs(r.paced.latency[pick] - base.paced.latency[pick]);
    const failed =
      r.saturation.non2xx + r.saturation.errors + (r.paced ? r.paced.non2xx + r.paced.errors : 0);
    return [
      ...first,
      r.target,
      r.saturation.rps.toFixed(0),
      proxy === undefined || r.target === "passthrough" ? "" : pct(r.saturation.rps / proxy.saturation.rps),
      r.paced === undefined ? "n/a" : ms(r.paced.latency.p50),
      extra("p50"),
      extra("p99"),
      us(r.cpu.ms[r.target], r.cpu.requests),
      us(r.cpu.ms.Postgres, r.cpu.requests),
      us(r.cpu.ms.Redis, r.cpu.requests),
      String(failed),
    ];
  });
}

const stepHead = (first: string[]) => [
  ...first,
  "target",
  "req/s at saturation",
  "÷ pass-through",
  "p50 at fixed rate",
  "added p50",
  "added p99",
  "own CPU/request",
  "Postgres CPU/request",
  "Redis CPU/request",
  "failed",
];

function sizeSection(r: ScalingResults): string {
  return [
    "### Request size: prompts of 1 KB to 1 MB\n",
    "Saturation with fewer connections for big bodies; added latency at a fixed rate that falls with the size",
    "(both in the first columns). CPU per request is over the saturation run.\n",
    table(
      stepHead(["prompt", "connections", "fixed rate (req/s)"]),
      r.sizes.flatMap((s) => stepRows(s.rows, [sizeLabel(s.bytes), String(s.connections), String(s.rate)])),
    ),
  ].join("\n");
}

function keysSection(r: ScalingResults): string {
  const first = r.keys[0];
  const perKey = (target: string, n: number, pick: "rssKiB" | "heapBytes") => {
    const at = r.keys.find((k) => k.keys === n)?.memory.find((m) => m.target === target);
    const one = first?.memory.find((m) => m.target === target);
    if (at === undefined || one === undefined || n <= (first?.keys ?? 0)) return "";
    const bytes = (at[pick] - one[pick]) * (pick === "rssKiB" ? 1024 : 1);
    return `${(bytes / (n - first!.keys)).toFixed(0)} B`;
  };
  const memoryRows = r.keys.flatMap((k) =>
    k.memory.map((m) => [
      k.keys.toLocaleString("en"),
      m.target,
      `${(m.rssKiB / 1024).toFixed(1)} MiB`,
      Number.isFinite(m.heapBytes) ? `${(m.heapBytes / 2 ** 20).toFixed(1)} MiB` : "n/a",
      perKey(m.target, k.keys, "rssKiB"),
      perKey(m.target, k.keys, "heapBytes"),
    ]),
  );
  return [
    `### Distinct keys in use: ${r.keys.map((k) => k.keys.toLocaleString("en")).join(", ")} keys in the key cache\n`,
    `Requests spread round robin over that many keys; saturation with ${r.settings.connections} connections, added`,
    `latency at ${r.settings.rate} req/s. The upstream and the pass-through take no key and repeat as baselines.\n`,
    table(
      stepHead(["keys"]),
      r.keys.flatMap((k) => stepRows(k.rows, [k.keys.toLocaleString("en")])),
    ),
    "",
    `Memory once the keys were warmed (one \`GET /v1/models\` per key), and per cached key: the growth over the`,
    `${first?.keys ?? 1}-key step ÷ the keys added. V8 heap used is prom-client's \`nodejs_heap_size_used_bytes\` and`,
    "includes garbage not yet collected (the lowest reading over 3 s of light load is shown); steps of few keys",
    "are within that noise.\n",
    table(["keys", "gateway", "VmRSS", "V8 heap used", "RSS per key", "heap per key"], memoryRows),
  ].join("\n");
}

function longStreamSection(r: ScalingResults): string {
  const ls = r.longStreams!;
  const base = ls.rows.find((x) => x.target === "upstream");
  const proxy = ls.rows.find((x) => x.target === "passthrough");
  const perStream = (v: number | undefined, n: number) =>
    v === undefined || !Number.isFinite(v) || n === 0 ? "n/a" : `${(v / n).toFixed(1)} ms`;
  return [
    `### Long streams: ${ls.chunks.toLocaleString("en")} chunks, ${ls.concurrency} at a time\n`,
    "Time to the first byte and to `[DONE]` at the client, and the CPU the row's own process spent per stream",
    "(/proc, over all its long streams; 10 ms ticks, so few short streams read as 0). Each target is warmed by one",
    "unmeasured wave, then the waves go to the targets in a rotating order; the full-pipeline gateways are new",
    "processes started for this part (same build, database and key), so their CPU is the streams' own, not the",
    "collection of what the earlier parts left on the heap.\n",
    table(
      [
        "target",
        "streams",
        "TTFT p50",
        "added TTFT p50",
        "total p50",
        "total p99",
        "added total p50",
        "own CPU/stream",
        "÷ pass-through's",
        "failed",
      ],
      ls.rows.map((x) => {
        const isBase = x.target === "upstream" || base === undefined;
        const own = x.cpuMs[x.target];
        const proxyCpu = proxy?.cpuMs.passthrough;
        return [
          x.target,
          String(x.streams),
          ms(x.ttft.p50),
          isBase ? "(baseline)" : signedMs(x.ttft.p50 - base.ttft.p50),
          ms(x.total.p50),
          ms(x.total.p99),
          isBase ? "(baseline)" : signedMs(x.total.p50 - base.total.p50),
          perStream(own, x.streams - x.failures),
          x.target === "upstream" ||
          x.target === "passthrough" ||
          own === undefined ||
          proxyCpu === undefined ||
          !(proxyCpu > 0)
            ? ""
            : `${(own / (x.streams - x.failures) / (proxyCpu / ((proxy?.streams ?? 0) - (proxy?.failures ?? 0)))).toFixed(2)}×`,
          String(x.failures),
        ];
      }),
    ),
  ].join("\n");
}

function workersSection(r: ScalingResults): string {
  const proxy = r.workers.find((w) => w.target === "passthrough");
  const ignored = r.workers.some((w) => w.workers > 1 && w.processes <= 1);
  return [
    `### Workers: the full pipeline with GATEWAY_WORKERS=${r.settings.workers.join(", ")}\n`,
    `Saturation, ${r.settings.connections} connections, ${r.settings.rounds} rounds in rotating order (median). CPU sums`,
    "the gateway's process and its worker processes.",
    ...(ignored
      ? [
          "",
          "**This gateway ignores GATEWAY_WORKERS**: no worker process appeared, so the rows measure the same single",
          "process twice, and their difference is noise.",
        ]
      : []),
    "",
    table(
      [
        "target",
        "GATEWAY_WORKERS",
        "processes",
        "req/s (median)",
        "rounds",
        "÷ pass-through",
        "p50",
        "p99",
        "CPU/request",
      ],
      r.workers.map((w) => [
        w.target,
        w.workers === 0 ? "" : String(w.workers),
        String(w.processes),
        w.rps.toFixed(0),
        w.rounds.map((v) => v.toFixed(0)).join(", "),
        w.target === "passthrough" || proxy === undefined ? "" : pct(w.rps / proxy.rps),
        ms(w.latency.p50),
        ms(w.latency.p99),
        us(w.cpu.ms, w.cpu.requests),
      ]),
    ),
  ].join("\n");
}

/** The scaling tables, or "" when no scaling part ran. */
export function scalingSection(r: ScalingResults | undefined): string {
  if (r === undefined) return "";
  const parts: string[] = [];
  if (r.sizes.length > 0) parts.push(sizeSection(r));
  if (r.keys.length > 0) parts.push(keysSection(r));
  if (r.longStreams !== undefined) parts.push(longStreamSection(r));
  if (r.workers.length > 0) parts.push(workersSection(r));
  return parts.length === 0 ? "" : ["## How cost grows", "", parts.join("\n\n"), ""].join("\n");
}

/** "How to read this" notes of the scaling tables. */
export const scalingNotes = `- **How cost grows** (\`--no-scaling\` leaves it out): after the soak, on the gateways above, one target at a
  time. *Request size*: the prompt's text sits in a system message and the fake echoes only the last user
  message, so the answer stays small and the size is the request's. *Distinct keys*: the keys are copies of
  the gateway's own virtual key (same limits) written straight into its \`keys\` table with its own hashing,
  each used once through \`GET /v1/models\` before measuring; the table shows whether the cost per request stays
  flat as the keys outnumber what the key cache keeps fresh (while the Redis bus delivers without a break, a
  key's cached record is refreshed from Postgres in the background when older than 60 s, the due keys of 20 ms
  read in one query, and waited for when older than 120 s; the cache holds at most 100,000 keys).
  *Long streams*: the fake sends one chunk per word of the echoed prompt, --chunk-delay apart, so the total is
  mostly the upstream's pacing; the CPU column is what each chunk costs the process. *Workers*: a separate
  full-pipeline gateway per GATEWAY_WORKERS value, on the same database and Redis; CPU sums the process tree.
- **Redis commands per request** (CPU table): Redis \`INFO commandstats\` call counts over a target's saturation
  rounds ÷ the requests answered in them. Redis counts the commands a Lua script runs as well as the script
  call itself: \`evalsha\`/\`eval\` are the round trips, the \`get\`, \`incrby\`, … beside them mostly ran inside
  those scripts. The counts are the whole server's: other clients of a shared Redis count too.
- **CPU of a gateway** (every CPU column) sums its process and its descendants (the worker processes of
  GATEWAY_WORKERS), from /proc.
`;
