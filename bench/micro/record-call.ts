/**
 * Micro-benchmark of putting finished chat calls into the gateway's metrics (`npx tsx bench/micro/record-call.ts
 * [--baseline <checkout>] [--calls N] [--keys K] [--scrape-every S]`): per call, `recordCallMetrics` (tokens,
 * spend, three latency histograms, the remaining-limit gauges, a key's and a user's budget gauges) and
 * `recordRequest` (the request counter) of `services/gateway/src/metrics/record-call.ts`, on the real metrics of
 * `createMetrics`, over K callers (label sets) in turn. Every S calls the registry is read as a scrape reads it
 * (`getMetricsAsJSON`, which folds whatever is batched), timed apart. With `--baseline`, the same functions of
 * another checkout (e.g. main before a change) run side by side, in rotating order, three rounds. Prints µs per
 * call for the recording alone and with the scrapes' cost spread over the calls (a scrape also collects the
 * process metrics: the same in every row), medians last. About 4 s with the defaults.
 */
import { parseArgs } from "node:util";
import { createMetrics, type GatewayMetrics } from "../../services/gateway/src/metrics/metrics.js";
import {
  benchCallers,
  checkoutVariant,
  type MetricsVariant,
  recordOneCall,
  thisCheckout,
} from "../lib/metric-calls.js";

type Variant = MetricsVariant<GatewayMetrics>;

const { values } = parseArgs({
  options: {
    baseline: { type: "string" },
    calls: { type: "string" },
    keys: { type: "string" },
    "scrape-every": { type: "string" },
  },
});
const CALLS = Number(values.calls ?? 100_000);
const KEYS = Number(values.keys ?? 20);
/** 15 s of traffic at 1,000 requests/s between two scrapes by default. */
const SCRAPE_EVERY = Number(values["scrape-every"] ?? 15_000);

const variants = new Map<string, Variant>([["record-call", { create: createMetrics, ...thisCheckout }]]);
if (values.baseline !== undefined)
  variants.set("record-call (baseline)", await checkoutVariant<GatewayMetrics>(values.baseline));

const callers = benchCallers(KEYS, 5);

/** µs per call of recording `calls` calls into fresh metrics through `variant`, without and with the scrapes. */
async function perCall(variant: Variant, calls: number): Promise<{ record: number; withScrapes: number }> {
  const metrics = variant.create();
  let recordNs = 0n;
  let scrapeNs = 0n;
  for (let done = 0; done < calls; ) {
    const slice = Math.min(SCRAPE_EVERY, calls - done);
    const t0 = process.hrtime.bigint();
    for (let i = done; i < done + slice; i++) {
      recordOneCall(variant.record, metrics, callers[i % KEYS]!, i);
    }
    const t1 = process.hrtime.bigint();
    await metrics.registry.getMetricsAsJSON();
    scrapeNs += process.hrtime.bigint() - t1;
    recordNs += t1 - t0;
    done += slice;
  }
  const us = (ns: bigint) => Number(ns) / calls / 1000;
  return { record: us(recordNs), withScrapes: us(recordNs + scrapeNs) };
}

const names = [...variants.keys()];
for (const name of names) await perCall(variants.get(name)!, 20_000); // warm-up
const rows = new Map<string, { record: number; withScrapes: number }[]>(names.map((n) => [n, []]));
console.log(`${CALLS} calls over ${KEYS} keys, a scrape every ${SCRAPE_EVERY} calls`);
console.log("| round | variant | record µs/call | record + scrapes µs/call |");
console.log("|---|---|---|---|");
for (let round = 0; round < 3; round++) {
  for (const name of names.map((_, i) => names[(i + round) % names.length]!)) {
    const result = await perCall(variants.get(name)!, CALLS);
    rows.get(name)!.push(result);
    console.log(
      `| ${round + 1} | ${name} | ${result.record.toFixed(3)} | ${result.withScrapes.toFixed(3)} |`,
    );
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const name of names) {
  const results = rows.get(name)!;
  console.log(
    `| median | ${name} | ${median(results.map((r) => r.record)).toFixed(3)} | ${median(results.map((r) => r.withScrapes)).toFixed(3)} |`,
  );
}
