/**
 * CompactHistogram: every read (the registry's text, `get()`, the registry's JSON and its cluster aggregation)
 * equals, to the byte, what a plain prom-client Histogram given the same calls reads, whichever API wrote them;
 * and its series live in its typed arrays, not in prom-client's per-series objects.
 */
import { Histogram, type HistogramConfiguration, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { CompactHistogram } from "../../../../services/gateway/src/metrics/compact-histogram.js";
import { expectSameReads } from "./same-reads.js";

const buckets = [0.001, 0.01, 0.1, 1, 10];
type Label = "model" | "key";

/** The same histogram twice, each on its own registry: prom-client's and the compact one. */
function twins(config: Partial<HistogramConfiguration<Label>> = {}) {
  const plainRegistry = new Registry();
  const compactRegistry = new Registry();
  const base = {
    name: "call_seconds",
    help: "calls",
    labelNames: ["model", "key"] as Label[],
    buckets,
    ...config,
  };
  const plain = new Histogram<Label>({ ...base, registers: [plainRegistry] });
  const compact = new CompactHistogram<Label>({ ...base, registers: [compactRegistry] });
  return { plain, compact, plainRegistry, compactRegistry };
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

/** `n` label sets, a key each, over three models; some with their labels in the other order. */
function labelSets(n: number): Record<Label, string>[] {
  return Array.from({ length: n }, (_, i) =>
    i % 5 === 0 ? { key: `k${i}`, model: `m${i % 3}` } : { model: `m${i % 3}`, key: `k${i}` },
  );
}

describe("CompactHistogram", () => {
  it("reads as prom-client's Histogram after observes through every API, over many label sets", async () => {
    const t = twins();
    const sets = labelSets(300);
    const all = values(3000);
    const slots = sets.map((labels) => t.compact.series(labels));
    await expectSameReads(t); // series() alone creates no series
    for (let i = 0; i < all.length; i++) {
      const labels = sets[(i * 7) % sets.length] as Record<Label, string>;
      const value = all[i] as number;
      t.plain.observe(labels, value);
      if (i % 3 === 0) t.compact.observeSeries(slots[(i * 7) % sets.length] as number, value);
      else if (i % 3 === 1) t.compact.observe(labels, value);
      else t.compact.labels(labels).observe(value);
      if (i === 1500) await expectSameReads(t);
    }
    t.plain.labels("m1", "k1").observe(0.5);
    t.compact.labels("m1", "k1").observe(0.5);
    await expectSameReads(t);
  });

  it("reads as prom-client's Histogram after zero, remove and reset, series order included", async () => {
    const t = twins();
    const both = (f: (h: Histogram<Label>) => void) => {
      f(t.plain);
      f(t.compact);
    };
    both((h) => h.observe({ model: "a", key: "1" }, 0.5));
    both((h) => h.observe({ model: "b", key: "2" }, 5));
    both((h) => h.zero({ model: "a", key: "1" })); // in place
    both((h) => h.zero({ key: "3", model: "c" })); // new, at the end
    both((h) => h.observe({ model: "c", key: "3" }, 0.05));
    await expectSameReads(t);
    both((h) => h.remove({ model: "a", key: "1" }));
    both((h) => h.remove("z", "9")); // absent: nothing
    both((h) => h.observe({ key: "1", model: "a" }, 2)); // back, at the end, with these labels
    await expectSameReads(t);
    both((h) => h.reset());
    await expectSameReads(t);
    both((h) => h.observe({ model: "b", key: "2" }, 0.001));
    await expectSameReads(t);
  });

  it("reads as prom-client's Histogram without labels, and with a collect hook", async () => {
    let collected = 0;
    const t = twins({ labelNames: [], collect: () => void collected++ });
    await expectSameReads(t);
    t.plain.observe(0.2);
    t.compact.observe(0.2);
    const endPlain = t.plain.startTimer();
    const endCompact = t.compact.startTimer();
    expect(endPlain()).toBeGreaterThanOrEqual(0);
    expect(endCompact()).toBeGreaterThanOrEqual(0);
    expect((await t.compact.get()).values.find((v) => v.metricName === "call_seconds_count")?.value).toBe(2);
    expect(collected).toBeGreaterThan(0);
    t.plain.reset();
    t.compact.reset();
    await expectSameReads(t);
  });

  it("refuses what prom-client refuses, with the same errors, and creates no series for them", async () => {
    const t = twins();
    const errorOf = (f: () => void) => {
      try {
        f();
      } catch (e) {
        return `${(e as Error).constructor.name}: ${(e as Error).message}`;
      }
      return "no error";
    };
    const bad = { model: "a", nope: "x" } as unknown as Record<Label, string>;
    expect(errorOf(() => t.compact.observe(bad, 1))).toBe(errorOf(() => t.plain.observe(bad, 1)));
    expect(errorOf(() => t.compact.series(bad))).toBe(errorOf(() => t.plain.observe(bad, 1)));
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY]) {
      const labels = { model: "a", key: "1" };
      expect(errorOf(() => t.compact.observe(labels, value))).toBe(
        errorOf(() => t.plain.observe(labels, value)),
      );
      expect(errorOf(() => t.compact.observeSeries(t.compact.series(labels), value))).toMatch(/^TypeError/);
    }
    await expectSameReads(t);
    expect(() => twins({ buckets: [1, 1, 2] })).toThrow(/distinct/);
  });

  it("keeps its series in typed arrays, growing with the label sets", async () => {
    const t = twins();
    const sets = labelSets(1000);
    for (const labels of sets) t.compact.observe(labels, 0.5);
    for (const labels of sets) t.compact.series(labels); // known: no new slot
    expect(t.compact.slotCount).toBe(1000);
    expect((t.compact as unknown as { hashMap?: unknown }).hashMap).toBeUndefined();
    // sum, count and one count per bucket, 8 bytes each, at most twice over for growth, plus a byte per slot.
    expect(t.compact.storedBytes).toBeLessThanOrEqual(2 * 1000 * ((buckets.length + 2) * 8 + 1));
  });
});
