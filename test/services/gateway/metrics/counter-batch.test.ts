import { Counter, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { CounterBatch, seriesKey } from "../../../../services/gateway/src/metrics/counter-batch.js";
import { metricValue } from "../../../helpers/metrics.js";

function batchedCounter() {
  const registry = new Registry();
  const batch = new CounterBatch();
  const counter = new Counter({
    name: "calls_total",
    help: "calls",
    labelNames: ["who"],
    registers: [registry],
    collect: () => batch.flush(),
  });
  return { registry, batch, counter };
}

describe("CounterBatch", () => {
  it("shows every pending increment to a scrape and to get(), once", async () => {
    const { registry, batch, counter } = batchedCounter();
    const a = batch.series(counter, { who: "a" });
    batch.add(a, 2);
    batch.add(a, 3);
    batch.add(batch.series(counter, { who: "b" }), 0);
    expect(await registry.metrics()).toContain('calls_total{who="a"} 5');
    expect(await registry.metrics()).toContain('calls_total{who="b"} 0');
    batch.add(a, 1);
    expect(await metricValue(registry, "calls_total", { who: "a" })).toBe(6);
    expect(await metricValue(registry, "calls_total", { who: "a" })).toBe(6);
  });

  it("keys label values without ambiguity", () => {
    expect(seriesKey(["a|1:b", "c"])).not.toBe(seriesKey(["a", "b|1:c"]));
    expect(seriesKey(["ab", ""])).not.toBe(seriesKey(["a", "b"]));
  });
});
