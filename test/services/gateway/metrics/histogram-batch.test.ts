/**
 * HistogramBatch: what a scrape or get() reads after batched observes equals what direct prom-client observes
 * give (buckets, counts, sums to the last bit), and the values it holds stay bounded.
 */
import { Histogram, Registry } from "prom-client";
import { describe, expect, it, vi } from "vitest";
import { HistogramBatch } from "../../../../services/gateway/src/metrics/histogram-batch.js";

const buckets = [0.001, 0.01, 0.1, 1, 10];

/** A histogram on its own registry, its collect hook flushing `batch` when given. */
function histogram(batch?: HistogramBatch) {
  const registry = new Registry();
  const metric = new Histogram({
    name: "call_seconds",
    help: "calls",
    labelNames: ["model", "key"],
    buckets,
    registers: [registry],
    ...(batch === undefined ? {} : { collect: () => batch.flush() }),
  });
  return { registry, metric };
}

/** Deterministic values over every bucket, past the last bound, on bounds, and with sums that round. */
function values(n: number): number[] {
  let x = 12345;
  return Array.from({ length: n }, (_, i) => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    if (i % 17 === 0) return buckets[i % buckets.length] as number;
    return (x / 2 ** 31) * 10 ** ((i % 7) - 3);
  });
}

const labelSets = [
  { model: "a", key: "k1" },
  { model: "a", key: "k2" },
  { model: "b", key: "k1" },
];

/**
 * A batched and a direct histogram; `observe(from, to)` feeds both `values(to)[from…to)` spread over `labelSets`,
 * calling `after` after each value.
 */
function twins(maxPending?: number) {
  const batch = new HistogramBatch(maxPending);
  const batched = histogram(batch);
  const direct = histogram();
  const series = labelSets.map((labels) => batch.series(batched.metric, labels));
  const observe = (from: number, to: number, after = () => {}) => {
    const all = values(to);
    for (let i = from; i < to; i++) {
      const value = all[i] as number;
      batch.observe(series[i % series.length]!, value);
      direct.metric.observe(labelSets[i % labelSets.length]!, value);
      after();
    }
  };
  return { batch, batched, direct, observe };
}

describe("HistogramBatch", () => {
  it("reads exactly as direct observes over several label sets, scrape after scrape", async () => {
    const { batched, direct, observe } = twins();
    observe(0, 1000);
    expect(await batched.registry.metrics()).toBe(await direct.registry.metrics());
    observe(1000, 2500); // folded onto sums that are no longer 0
    expect(await batched.metric.get()).toEqual(await direct.metric.get());
    expect(await batched.registry.metrics()).toBe(await direct.registry.metrics());
    expect(await batched.registry.metrics()).toContain('call_seconds_count{model="a",key="k1"} 834');
  });

  it("follows a reset of the histogram between scrapes", async () => {
    const { batched, direct, observe } = twins();
    observe(0, 300);
    await batched.registry.metrics();
    batched.metric.reset();
    direct.metric.reset();
    observe(300, 600);
    expect(await batched.registry.metrics()).toBe(await direct.registry.metrics());
  });

  it("never holds more than maxPending values when nobody scrapes, and loses none", async () => {
    const { batch, batched, direct, observe } = twins(8);
    const promObserve = vi.spyOn(batched.metric, "observe");
    let most = 0;
    observe(0, 1000, () => {
      most = Math.max(most, batch.pending);
    });
    expect(most).toBeLessThanOrEqual(8);
    // 125 flushes of 8 values over 3 series; prom-client's observe only creates each series.
    expect(promObserve).toHaveBeenCalledTimes(3);
    expect(await batched.registry.metrics()).toBe(await direct.registry.metrics());
    expect(batch.pending).toBe(0);
  });

  it("hands every value to observe when it does not know prom-client's storage", async () => {
    const batch = new HistogramBatch();
    const batched = histogram(batch);
    const direct = histogram();
    // prom-client hashes by the label object's own keys without it: still correct, but not prom-client 15's shape.
    Reflect.deleteProperty(batched.metric, "sortedLabelNames");
    Reflect.deleteProperty(direct.metric, "sortedLabelNames");
    const observe = vi.spyOn(batched.metric, "observe");
    const series = batch.series(batched.metric, { model: "a", key: "k1" });
    for (const value of values(50)) {
      batch.observe(series, value);
      direct.metric.observe({ model: "a", key: "k1" }, value);
    }
    expect(await batched.registry.metrics()).toBe(await direct.registry.metrics());
    expect(observe).toHaveBeenCalledTimes(50);
  });

  it("refuses unknown labels when the series is made and values that are not finite when observed", () => {
    const batch = new HistogramBatch();
    const { metric } = histogram(batch);
    expect(() => batch.series(metric, { model: "a", colour: "red" })).toThrow(/colour/);
    const series = batch.series(metric, { model: "a", key: "k" });
    expect(() => batch.observe(series, Number.NaN)).toThrow(TypeError);
    expect(() => batch.observe(series, Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(batch.pending).toBe(0);
  });
});
