/**
 * The compact metrics stand alone: none is a prom-client metric or carries prom-client's private methods and
 * fields, a registry reads them as its own (through `get()` alone too, the histogram's text included), and their
 * configuration is refused as prom-client refuses it, with the same errors.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { CompactCounter } from "../../../../services/gateway/src/metrics/compact-counter.js";
import { CompactGauge } from "../../../../services/gateway/src/metrics/compact-gauge.js";
import { CompactHistogram } from "../../../../services/gateway/src/metrics/compact-histogram.js";

/** Each compact metric class and the prom-client class it reads as. */
const pairs = [
  { compact: CompactCounter, plain: Counter },
  { compact: CompactGauge, plain: Gauge },
  { compact: CompactHistogram, plain: Histogram },
] as const;

/** `new`'s error as "Class: message", or "no error". */
function errorOf(make: () => unknown): string {
  try {
    make();
  } catch (e) {
    return `${(e as Error).constructor.name}: ${(e as Error).message}`;
  }
  return "no error";
}

describe("compact metrics", () => {
  it("are no prom-client metrics and have none of their private methods and fields", () => {
    for (const { compact: Compact, plain } of pairs) {
      const metric = new Compact({ name: "m_total", help: "m", labelNames: ["a"], registers: [] });
      expect(metric).not.toBeInstanceOf(plain);
      for (const member of ["incWithoutExemplar", "observeWithoutExemplar", "_getValue", "hashMap"]) {
        expect(member in metric, `${Compact.name}.${member}`).toBe(false);
      }
    }
  });

  it("refuse the configurations prom-client refuses, with the same errors", () => {
    const configs: unknown[] = [
      { name: "m", labelNames: ["a"] },
      { help: "m" },
      { name: "1m", help: "m" },
      { name: "m", help: "m", labelNames: ["a-b"] },
      { name: "m", help: "m", collect: "no" },
      { name: "m", help: "m", labelNames: ["le"] },
    ];
    for (const { compact: Compact, plain: Plain } of pairs) {
      for (const config of configs) {
        const given = { ...(config as object), registers: [] };
        const build = (Class: new (c: never) => unknown) => errorOf(() => new Class(given as never));
        expect(build(Compact), `${Compact.name} ${JSON.stringify(config)}`).toBe(build(Plain));
      }
      const registry = new Registry();
      new Plain({ name: "taken", help: "m", registers: [registry] });
      expect(errorOf(() => new Compact({ name: "taken", help: "m", registers: [registry] }))).toBe(
        "Error: A metric with the name taken has already been registered.",
      );
    }
  });

  it("are read, reset and listed by a registry as its own metrics, OpenMetrics text included", async () => {
    for (const contentType of [
      Registry.PROMETHEUS_CONTENT_TYPE,
      Registry.OPENMETRICS_CONTENT_TYPE,
    ] as const) {
      const plainRegistry = new Registry();
      const compactRegistry = new Registry();
      for (const r of [plainRegistry, compactRegistry]) r.setContentType(contentType as never);
      const config = { name: "calls_total", help: "calls", labelNames: ["model"] };
      const plain = new Counter({ ...config, registers: [plainRegistry] });
      const compact = new CompactCounter({ ...config, registers: [compactRegistry] });
      const plainHist = new Histogram({ ...config, name: "secs", registers: [plainRegistry] });
      const compactHist = new CompactHistogram({ ...config, name: "secs", registers: [compactRegistry] });
      for (const c of [plain, compact]) c.inc({ model: 'a"b' }, 2);
      for (const h of [plainHist, compactHist]) h.observe({ model: "a\\b" }, 0.3);
      expect(await compactRegistry.metrics()).toBe(await plainRegistry.metrics());
      expect(compactRegistry.getSingleMetric("secs")).toBe(compactHist);
      compactRegistry.resetMetrics();
      plainRegistry.resetMetrics();
      expect(await compactRegistry.metrics()).toBe(await plainRegistry.metrics());
    }
  });

  it("write the same histogram text through get() alone, as a registry ignoring getForPromString would", async () => {
    const config = { name: "secs", help: "s", labelNames: ["model", "key"], buckets: [0.1, 1] };
    const plainRegistry = new Registry();
    const plain = new Histogram({ ...config, registers: [plainRegistry] });
    const compact = new CompactHistogram({ ...config, registers: [] });
    const viaGet = new Registry();
    // Only what the typings promise a registry: the metric's name, `get()` and `reset()`.
    const { name } = compact;
    viaGet.registerMetric({ name, get: () => compact.get(), reset: () => compact.reset() } as never);
    for (const h of [plain, compact]) {
      h.observe({ key: "k1", model: 'm"1' }, 0.5);
      h.observe({ model: "m2", key: "k\\2" }, 5);
      h.zero({ model: "m3", key: "k3" });
    }
    expect(await viaGet.metrics()).toBe(await plainRegistry.metrics());
  });
});
