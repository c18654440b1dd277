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
import type { Deployment } from "../../services/gateway/src/config/types.js";
import type { LimitSubject } from "../../services/gateway/src/limits/types.js";
import { createMetrics } from "../../services/gateway/src/metrics/metrics.js";
import * as recordCall from "../../services/gateway/src/metrics/record-call.js";

/** The parts of a checkout's metrics this benchmark uses (its batches vary from checkout to checkout). */
interface AnyMetrics {
  registry: { clear(): void };
  batch?: { flush(): void };
  histograms?: { flush(): void };
  gauges?: { flush(): void };
}
type RecordCall = Pick<typeof recordCall, "recordCallMetrics" | "recordRequest">;
interface Variant {
  create: () => AnyMetrics;
  record: RecordCall;
}

const { values } = parseArgs({
  options: { baseline: { type: "string" }, keys: { type: "string" }, rounds: { type: "string" } },
});
const KEYS = Number(values.keys ?? 100_000);
const ROUNDS = Number(values.rounds ?? 3);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with node --expose-gc --import tsx");

const variants = new Map<string, Variant>([["metric-series", { create: createMetrics, record: recordCall }]]);
if (values.baseline !== undefined) {
  const src = `${values.baseline}/services/gateway/src/metrics`;
  const metrics = (await import(`${src}/metrics.ts`)) as { createMetrics: () => AnyMetrics };
  const record = (await import(`${src}/record-call.ts`)) as RecordCall;
  variants.set("metric-series (baseline)", { create: metrics.createMetrics, record });
}

const deployment: Deployment = {
  id: "d1",
  modelName: "general",
  provider: "openai",
  upstreamModel: "gpt-4o-mini",
  apiBase: "http://upstream.local/v1",
  tags: [],
  created: 0,
};
const subject = (scope: LimitSubject["scope"], id: string): LimitSubject => ({
  scope,
  id,
  rpmLimit: null,
  tpmLimit: null,
  maxBudget: 100,
  budgetDuration: "30d",
  budgetResetAt: Date.now() + 86_400_000,
  spend: 0,
});
/** The callers, made before any measure (the gateway holds its keys anyway): a key each, 1,000 users. */
const callers = Array.from({ length: KEYS }, (_, k) => {
  const hash = k.toString(16).padStart(64, "0");
  const user = `user-${k % 1000}`;
  return {
    caller: { hashed_api_key: hash, api_key_alias: `key-${k}`, user },
    subjects: [subject("key", hash), subject("user", user)],
  };
});
const headers = { "x-ratelimit-remaining-requests": "4999", "x-ratelimit-remaining-tokens": "1999000" };

/** One call of every key through `variant` into `metrics`; ns taken. */
function callEveryKey(variant: Variant, metrics: AnyMetrics, pass: number): bigint {
  const { recordCallMetrics, recordRequest } = variant.record;
  const m = metrics as Parameters<RecordCall["recordCallMetrics"]>[0];
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < KEYS; k++) {
    const { caller, subjects } = callers[k]!;
    recordCallMetrics(m, {
      caller,
      subjects,
      requestedModel: "general",
      deployment,
      promptTokens: 12,
      completionTokens: 5,
      totalTokens: 17,
      cost: 0.000_01,
      totalMs: 20 + ((k + pass) % 997),
      upstreamMs: 19 + ((k + pass) % 991),
      upstreamHeaders: headers,
      nowEpochMs: Date.now(),
    });
    recordRequest(m, caller, "/v1/chat/completions", "general", 200, undefined);
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
