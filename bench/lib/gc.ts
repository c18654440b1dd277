/**
 * Garbage-collection pauses of a gateway, read from its own `GET /metrics`: prom-client's default
 * `nodejs_gc_duration_seconds` histogram (`_sum` and `_count` per `kind`: minor = scavenge, major =
 * mark-compact, incremental = marking steps, weakcb; prom-client lib/metrics/gc.js, from Node's
 * `PerformanceObserver` `gc` entries). Two readings around a run give the pauses inside it.
 */

/** Pause count and total pause time, ms, per GC kind. */
export type GcTotals = Record<string, { count: number; ms: number }>;

const line = /^nodejs_gc_duration_seconds_(sum|count)\{kind="([a-z]+)"\}\s+([0-9.eE+-]+)$/gm;

/**
 * Reads the GC totals a gateway has recorded since it started.
 * @throws when `/metrics` does not answer 200.
 */
export async function readGcTotals(origin: string): Promise<GcTotals> {
  const res = await fetch(`${origin}/metrics`);
  if (!res.ok) throw new Error(`GET ${origin}/metrics answered ${res.status}`);
  const text = await res.text();
  const totals: GcTotals = {};
  for (const [, field, kind, value] of text.matchAll(line)) {
    const entry = totals[kind!] ?? { count: 0, ms: 0 };
    totals[kind!] = entry;
    if (field === "sum") entry.ms = Number(value) * 1000;
    else entry.count = Number(value);
  }
  return totals;
}

/** `after − before`, per kind. */
export function gcBetween(before: GcTotals, after: GcTotals): GcTotals {
  const out: GcTotals = {};
  for (const [kind, a] of Object.entries(after)) {
    const b = before[kind] ?? { count: 0, ms: 0 };
    out[kind] = { count: a.count - b.count, ms: a.ms - b.ms };
  }
  return out;
}
