/**
 * Micro-benchmark of the gateway metrics' memory per key (`node --expose-gc --import tsx
 * bench/micro/metric-series.ts [--baseline <checkout>] [--keys K] [--rounds R]`): K distinct virtual keys each
 * make one chat call, recorded through the real functions of `services/gateway/src/metrics/record-call.ts`
 * (`recordCallMetrics`: tokens, spend, three latency histograms, remaining-limit gauges, the key's and its user's
 * budget gauges; `recordRequest`: the request counter) on fresh metrics of `createMetrics`; then whatever is
 * batched is handed to prom-client (as a scrape's collect hooks do, without building the text) and the heap is
 * measured after `global.gc()`. Prints live heap per key (bytes: heap after minus heap before, over K), µs per
 * first call of a key (its series made) and µs per second call of each key (series known), medians last. With
 * `--baseline`, the same functions of another checkout (e.g. main before a change) run side by side, in rotating
 * order. About 10 s with K = 100,000 and 3 rounds.
 */
import { parseArgs } from "node:util";
import { createMetrics } from "../../services/gateway/src/metrics/metrics.js";
import {
  benchCallers,
  checkoutVariant,
  type MetricsVariant,
  type AnyMetrics as RecordedMetrics,
  recordOneCall,
  thisCheckout,
} from "../lib/metric-calls.js";

/** The parts of a checkout's metrics this benchmark uses (its batches vary from checkout to checkout). */
interface AnyMetrics {
  registry: { clear(): void };
  batch?: { flush(): void };
  histograms?: { flush(): void };
  gauges?: { flush(): void };
}
type Variant = MetricsVariant<AnyMetrics>;

const { values } = parseArgs({
  options: { baseline: { type: "string" }, keys: { type: "string" }, rounds: { type: "string" } },
});
const KEYS = Number(values.keys ?? 100_000);
const ROUNDS = Number(values.rounds ?? 3);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with node --expose-gc --import tsx");

const variants = new Map<string, Variant>([["metric-series", { create: createMetrics, ...thisCheckout }]]);
if (values.baseline !== undefined)
  variants.set("metric-series (baseline)", await checkoutVariant<AnyMetrics>(values.baseline));

/** The callers, made before any measure (the gateway holds its keys anyway): a key each, 1,000 users. */
const callers = benchCallers(KEYS, 1000);

/** One call of every key through `variant` into `metrics`; ns taken. */
function callEveryKey(variant: Variant, metrics: AnyMetrics, pass: number): bigint {
  const m = metrics as unknown as RecordedMetrics;
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < KEYS; k++) {
    recordOneCall(variant.record, m, callers[k]!, k + pass);
  }
  return process.hrtime.bigint() - t0;
}

/** Heap per key (bytes) kept by one call of each key, and µs per first and per second call of a key. */
function measure(variant: Variant): { bytes: number; first: number; second: number } {
  gc!();
  const before = process.memoryUsage().heapUsed;
  const metrics = variant.create();
  const firstNs = callEveryKey(variant, metrics, 0);
  for (const pending of [metrics.batch, metrics.histograms, metrics.gauges]) pending?.flush();
  gc!();
  const bytes = (process.memoryUsage().heapUsed - before) / KEYS;
  const secondNs = callEveryKey(variant, metrics, 1);
  // prom-client's default metrics (kept alive by their GC observer) hold the registry: let go of the metrics.
  metrics.registry.clear();
  const us = (ns: bigint) => Number(ns) / KEYS / 1000;
  return { bytes, first: us(firstNs), second: us(secondNs) };
}

const names = [...variants.keys()];
const rows = new Map<string, ReturnType<typeof measure>[]>(names.map((n) => [n, []]));
console.log(`${KEYS} keys, one call each, then a second call each`);
console.log("| round | variant | heap bytes/key | µs/first call | µs/second call |");
console.log("|---|---|---|---|---|");
const row = (round: string, name: string, r: ReturnType<typeof measure>) =>
  console.log(
    `| ${round} | ${name} | ${r.bytes.toFixed(0)} | ${r.first.toFixed(3)} | ${r.second.toFixed(3)} |`,
  );
for (let round = 0; round < ROUNDS; round++) {
  for (const name of names.map((_, i) => names[(i + round) % names.length]!)) {
    const result = measure(variants.get(name)!);
    rows.get(name)!.push(result);
    row(String(round + 1), name, result);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const name of names) {
  const rs = rows.get(name)!;
  row("median", name, {
    bytes: median(rs.map((r) => r.bytes)),
    first: median(rs.map((r) => r.first)),
    second: median(rs.map((r) => r.second)),
  });
}
