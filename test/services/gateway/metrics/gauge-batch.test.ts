/** GaugeBatch: a scrape or get() reads each series' last value, handed to prom-client once per series. */
import { Gauge, Registry } from "prom-client";
import { describe, expect, it, vi } from "vitest";
import { GaugeBatch } from "../../../../services/gateway/src/metrics/gauge-batch.js";
import { metricValue } from "../../../helpers/metrics.js";

function batchedGauge() {
  const registry = new Registry();
  const batch = new GaugeBatch();
  const gauge = new Gauge({
    name: "left",
    help: "left",
    labelNames: ["who"],
    registers: [registry],
    collect: () => batch.flush(),
  });
  return { registry, batch, gauge };
}

describe("GaugeBatch", () => {
  it("keeps the last value of each label set and sets prom-client once per series per read", async () => {
    const { registry, batch, gauge } = batchedGauge();
    const set = vi.spyOn(gauge, "set");
    const a = batch.series(gauge, { who: "a" });
    const b = batch.series(gauge, { who: "b" });
    for (let i = 0; i < 100; i++) {
      batch.set(a, 100 - i);
      batch.set(b, i * 0.5);
    }
    batch.set(b, Number.POSITIVE_INFINITY);
    expect(set).not.toHaveBeenCalled();
    expect(await registry.metrics()).toContain('left{who="a"} 1\nleft{who="b"} +Inf');
    expect(set).toHaveBeenCalledTimes(2);
    batch.set(a, -3);
    expect(await metricValue(registry, "left", { who: "a" })).toBe(-3);
    expect(await metricValue(registry, "left", { who: "a" })).toBe(-3);
    expect(set).toHaveBeenCalledTimes(3);
  });

  it("creates no series before a value is set, and refuses unknown labels", async () => {
    const { registry, batch, gauge } = batchedGauge();
    batch.series(gauge, { who: "a" });
    expect(await registry.metrics()).not.toContain('who="a"');
    expect(() => batch.series(gauge, { colour: "red" })).toThrow(/colour/);
  });
});
