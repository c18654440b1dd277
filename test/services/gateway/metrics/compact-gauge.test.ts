/**
 * CompactGauge: every read (the registry's text, `get()`, the registry's JSON and its cluster aggregation)
 * equals, to the byte, what a plain prom-client Gauge given the same calls reads, through every API, with gauges
 * sharing a label index; and the errors are prom-client's.
 */
import { Gauge, type GaugeConfiguration, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { CompactGauge } from "../../../../services/gateway/src/metrics/compact-gauge.js";
import { LabelIndex } from "../../../../services/gateway/src/metrics/series-store.js";
import { expectSameReads } from "./same-reads.js";

type Label = "model" | "key";

/** The same gauge twice, each on its own registry: prom-client's and the compact one. */
function twins(config: Partial<GaugeConfiguration<Label>> = {}, index?: LabelIndex) {
  const plainRegistry = new Registry();
  const compactRegistry = new Registry();
  const base = {
    name: "left",
    help: "left",
    labelNames: ["model", "key"] as Label[],
    aggregator: "min" as const,
  };
  const plain = new Gauge<Label>({ ...base, ...config, registers: [plainRegistry] });
  const compact = new CompactGauge<Label>({ ...base, ...config, registers: [compactRegistry], index });
  return { plain, compact, plainRegistry, compactRegistry };
}

describe("CompactGauge", () => {
  it("reads as prom-client's Gauge after set, inc, dec, labels, remove and reset, two sharing an index", async () => {
    const index = new LabelIndex(["key", "model"]);
    const a = twins({}, index);
    const b = twins({ name: "right" }, index);
    const both = (f: (g: Gauge<Label>) => void) => {
      for (const t of [a, b]) {
        f(t.plain);
        f(t.compact);
      }
    };
    for (let i = 0; i < 600; i++) {
      const labels = i % 4 === 0 ? { key: `k${i % 150}`, model: "m" } : { model: "m", key: `k${i % 150}` };
      if (i % 5 === 0) both((g) => g.inc(labels, i / 7));
      else if (i % 5 === 1) both((g) => g.dec(labels));
      else if (i % 5 === 2) both((g) => g.labels("m", `k${i % 150}`).set(-i));
      else if (i % 5 === 3) both((g) => g.set(labels, i % 2 ? Number.POSITIVE_INFINITY : i / 3));
      else both((g) => g.labels(labels).inc());
    }
    await expectSameReads(a);
    await expectSameReads(b);
    both((g) => g.remove({ model: "m", key: "k3" }));
    both((g) => g.remove("m", "absent"));
    both((g) => g.set({ key: "k3", model: "m" }, 2)); // back, at the end, with these labels
    await expectSameReads(a);
    expect(a.compact.valueOf({ model: "m", key: "k3" })).toBe(2);
    both((g) => g.reset());
    await expectSameReads(a);
  });

  it("reads as prom-client's Gauge without labels and with a collect hook", async () => {
    let collected = 0;
    const t = twins({ labelNames: [], collect: () => void collected++ });
    await expectSameReads(t);
    t.plain.inc();
    t.compact.inc();
    t.plain.dec(3);
    t.compact.dec(3);
    await expectSameReads(t);
    t.compact.setToCurrentTime();
    t.compact.startTimer()();
    expect(collected).toBeGreaterThan(0);
  });

  it("refuses what prom-client refuses, with the same errors", async () => {
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
    const labels = { model: "a", key: "1" };
    for (const call of [
      (g: Gauge<Label>) => g.set(bad, 1),
      (g: Gauge<Label>) => g.inc(bad),
      (g: Gauge<Label>) => g.set(labels, "1" as unknown as number),
      (g: Gauge<Label>) => g.inc(labels, "1" as unknown as number),
      (g: Gauge<Label>) => g.dec(labels, "2" as unknown as number),
    ]) {
      expect(errorOf(() => call(t.compact))).toBe(errorOf(() => call(t.plain)));
    }
    await expectSameReads(t);
  });
});
