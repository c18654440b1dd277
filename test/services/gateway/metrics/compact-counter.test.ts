/**
 * CompactCounter: every read (the registry's text, `get()`, the registry's JSON and its cluster aggregation)
 * equals, to the byte, what a plain prom-client Counter given the same calls reads, whichever API wrote them,
 * with counters sharing a label index; and its series live in typed arrays.
 */
import { Counter, type CounterConfiguration, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { CompactCounter } from "../../../../services/gateway/src/metrics/compact-counter.js";
import { LabelIndex } from "../../../../services/gateway/src/metrics/series-store.js";
import { expectSameReads } from "./same-reads.js";

type Label = "model" | "key";

/** The same counter twice, each on its own registry: prom-client's and the compact one. */
function twins(config: Partial<CounterConfiguration<Label>> = {}, index?: LabelIndex) {
  const plainRegistry = new Registry();
  const compactRegistry = new Registry();
  const base = { name: "calls_total", help: "calls", labelNames: ["model", "key"] as Label[], ...config };
  const plain = new Counter<Label>({ ...base, registers: [plainRegistry] });
  const compact = new CompactCounter<Label>({ ...base, registers: [compactRegistry], index });
  return { plain, compact, plainRegistry, compactRegistry };
}

/** `n` label sets, a key each, over three models; some with their labels in the other order. */
function labelSets(n: number): Record<Label, string>[] {
  return Array.from({ length: n }, (_, i) =>
    i % 5 === 0 ? { key: `k${i}`, model: `m${i % 3}` } : { model: `m${i % 3}`, key: `k${i}` },
  );
}

describe("CompactCounter", () => {
  it("reads as prom-client's Counter after increments through every API, two counters sharing an index", async () => {
    const index = new LabelIndex(["key", "model"]);
    const a = twins({}, index);
    const b = twins({ name: "other_total" }, index);
    const sets = labelSets(300);
    const slots = sets.map((labels) => a.compact.series(labels));
    await expectSameReads(a); // series() alone creates no series
    for (let i = 0; i < 3000; i++) {
      const n = (i * 7) % sets.length;
      const labels = sets[n] as Record<Label, string>;
      const value = (i % 4) * 0.1 + (i % 3 === 0 ? 1e-9 : 0);
      a.plain.inc(labels, value);
      if (i % 3 === 0) a.compact.add(slots[n] as number, value);
      else if (i % 3 === 1) a.compact.inc(labels, value);
      else a.compact.labels(labels).inc(value);
      if (i % 2 === 0) {
        b.plain.inc(sets[(n + 1) % sets.length] as Record<Label, string>);
        b.compact.add(slots[(n + 1) % sets.length] as number, 1); // slots of the shared index
      }
      if (i === 1500) await expectSameReads(a);
    }
    a.plain.labels("m1", "k1").inc();
    a.compact.labels("m1", "k1").inc();
    await expectSameReads(a);
    await expectSameReads(b);
  });

  it("reads as prom-client's Counter after remove and reset, and without labels", async () => {
    const t = twins();
    const both = (f: (c: Counter<Label>) => void) => {
      f(t.plain);
      f(t.compact);
    };
    both((c) => c.inc({ model: "a", key: "1" }, 2));
    both((c) => c.inc({ model: "b", key: "2" }));
    both((c) => c.inc({ key: "3", model: "c" }, 0));
    both((c) => c.remove({ model: "a", key: "1" }));
    both((c) => c.remove("z", "9"));
    both((c) => c.inc({ key: "1", model: "a" }, 5)); // back, at the end, with these labels
    await expectSameReads(t);
    both((c) => c.reset());
    await expectSameReads(t);
    const bare = twins({ labelNames: [] });
    await expectSameReads(bare);
    bare.plain.inc(3);
    bare.compact.inc(3);
    bare.plain.inc();
    bare.compact.inc();
    await expectSameReads(bare);
    bare.plain.reset();
    bare.compact.reset();
    await expectSameReads(bare);
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
    const labels = { model: "a", key: "1" };
    expect(errorOf(() => t.compact.inc(bad, 1))).toBe(errorOf(() => t.plain.inc(bad, 1)));
    expect(errorOf(() => t.compact.series(bad))).toBe(errorOf(() => t.plain.inc(bad, 1)));
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, -1]) {
      expect(errorOf(() => t.compact.inc(labels, value))).toBe(errorOf(() => t.plain.inc(labels, value)));
      expect(errorOf(() => t.compact.add(t.compact.series(labels), value))).toBe(
        errorOf(() => t.plain.inc(labels, value)),
      );
    }
    await expectSameReads(t);
    expect(() => twins({ name: "x_total" }, new LabelIndex(["model"]))).toThrow(/other label names/);
  });

  it("keeps its series in typed arrays", async () => {
    const t = twins();
    for (const labels of labelSets(1000)) t.compact.inc(labels);
    expect((t.compact as unknown as { hashMap?: unknown }).hashMap).toBeUndefined();
    expect((await t.compact.get()).values).toHaveLength(1000);
  });
});
