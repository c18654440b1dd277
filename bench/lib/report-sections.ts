/** The GC, CPU and profile sections of RESULTS.md (report.ts assembles the file). */
import { pct, markdownTable as table, usPer } from "./format.js";
import type { ProfileSummary } from "./profile.js";
import type { CommandCounts } from "./redis-commands.js";
import type { BenchResults } from "./results.js";

/** GC pauses inside the judged fixed-rate runs: how often the gateway stopped, and for how long. */
export function gcSection(r: BenchResults): string {
  const kinds = ["minor", "major", "incremental"];
  const cell = (t: { count: number; ms: number } | undefined) =>
    t === undefined || t.count === 0 ? "0" : `${t.count} × ${(t.ms / t.count).toFixed(2)} ms`;
  return [
    "### GC pauses during those runs (the gateway's own `nodejs_gc_duration_seconds`)\n",
    "Pauses per kind as count × mean length, over every round of a rate, and the share of wall time spent paused.",
    "A request that arrives during a pause waits for it, so pauses longer than the p99 budget show in the p99.\n",
    table(
      ["rate (req/s)", "gateway", "seconds", ...kinds.map((k) => `${k} GC`), "paused"],
      r.gc.map((g) => {
        const paused = Object.values(g.kinds).reduce((a, k) => a + k.ms, 0);
        return [
          String(g.rate),
          g.target,
          g.seconds.toFixed(0),
          ...kinds.map((k) => cell(g.kinds[k])),
          pct(paused / 1000 / g.seconds),
        ];
      }),
    ),
  ].join("\n");
}

/**
 * CPU per answered request during the saturation rounds, by process: where a request's cost lands. Columns
 * are the meters that ran (load generator, upstream, proxy or gateways, Redis, Postgres).
 */
export function cpuSection(r: BenchResults): string {
  const columns = [...new Set(r.cpu.flatMap((c) => Object.keys(c.ms)))];
  const perRequest = usPer;
  const withRedis = r.cpu.some((c) => c.redis !== undefined);
  const rows = r.cpu.map((c) => {
    const total = Object.values(c.ms)
      .filter(Number.isFinite)
      .reduce((a, b) => a + b, 0);
    return [
      c.target,
      String(c.requests),
      ...columns.map((col) => perRequest(c.ms[col], c.requests)),
      perRequest(total, c.requests),
      ...(withRedis ? [redisPerRequest(c.redis, c.requests)] : []),
    ];
  });
  return [
    "### CPU per request at saturation, by process (/proc/<pid>/stat, Redis `INFO cpu`)\n",
    "Every process's CPU time over the saturation rounds of one target, divided by the requests answered in them.",
    "A process idle in that target's rounds shows its background cost (timers, the key cache's refresh, flushes).",
    ...(withRedis
      ? [
          "Redis commands: `INFO commandstats` calls over those rounds ÷ requests (all clients of the server).\n",
        ]
      : [""]),
    table(
      ["target", "requests", ...columns, "total", ...(withRedis ? ["Redis commands/request"] : [])],
      rows,
    ),
  ].join("\n");
}

/** `2.00 (evalsha 2.00)`: Redis commands per request, in all and per command (those ≥ 0.01 per request). */
export function redisPerRequest(counts: CommandCounts | undefined, requests: number): string {
  if (counts === undefined || requests === 0) return "n/a";
  const entries = Object.entries(counts)
    .map(([name, calls]) => [name, calls / requests] as const)
    .sort((a, b) => b[1] - a[1]);
  const total = entries.reduce((a, [, v]) => a + v, 0);
  const parts = entries.filter(([, v]) => v >= 0.01).map(([name, v]) => `${name} ${v.toFixed(2)}`);
  return `${total.toFixed(2)}${parts.length > 0 ? ` (${parts.join(", ")})` : ""}`;
}

export function profileSection(r: BenchResults): string {
  if (r.profiles === undefined || r.profiles.length === 0) return "";
  const parts = [
    "## Where the CPU time goes (`node --cpu-prof`, whole run, main thread)\n",
    "Self time: a function's callees are counted where they run. `writev` is the system call that sends on a",
    "socket; on loopback the kernel also delivers to the receiver inside it. µs/request divides by every",
    "request the process answered in the run (warm-up, fixed rates, saturation, streams).\n",
  ];
  for (const { process, file, summary, requests } of r.profiles) {
    const perRequest = (e: { ms: number }) =>
      requests > 0 ? `${((e.ms * 1000) / requests).toFixed(1)} µs` : "n/a";
    const rows = (entries: ProfileSummary["areas"]) =>
      entries.map((e) => [e.name, `${e.ms.toFixed(0)} ms`, pct(e.share), perRequest(e)]);
    parts.push(
      `### ${process}: ${summary.busyMs.toFixed(0)} ms busy for ${requests} requests, ${perRequest({ ms: summary.busyMs })} per request (\`${file}\`)\n`,
    );
    parts.push(table(["area", "self time", "share", "per request"], rows(summary.areas)), "");
    if (process.startsWith("gateway")) {
      parts.push(table(["function", "self time", "share", "per request"], rows(summary.functions)), "");
    }
  }
  return parts.join("\n");
}
