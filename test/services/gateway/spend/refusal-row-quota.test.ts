/** The per-key quota of refusal rows: a fixed one-minute window per key, the rest counted as dropped. */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { RefusalRowQuota } from "../../../../services/gateway/src/spend/refusal-row-quota.js";

function quota(perMinute: number) {
  let now = 1_000_000;
  const registry = new Registry();
  const q = new RefusalRowQuota({ perMinute, clock: { now: () => now }, registry });
  const dropped = async () =>
    (await registry.getSingleMetric("gateway_refusal_rows_dropped_total")?.get())?.values[0]?.value ?? 0;
  return { q, dropped, advance: (ms: number) => (now += ms) };
}

describe("RefusalRowQuota", () => {
  it("lets each key add perMinute rows a window, counts the rest as dropped, and starts again after a minute", async () => {
    const { q, dropped, advance } = quota(2);
    const taken = [q.take("a"), q.take("a"), q.take("a"), q.take("b"), q.take(null), q.take(null)];
    expect(taken).toEqual([true, true, false, true, true, true]);
    expect(q.take(null)).toBe(false);
    expect(await dropped()).toBe(2);
    advance(59_999);
    expect(q.take("a")).toBe(false);
    advance(1);
    expect([q.take("a"), q.take("a"), q.take("a")]).toEqual([true, true, false]);
    expect(await dropped()).toBe(4);
  });

  it("writes no refusal row at 0", () => {
    const { q } = quota(0);
    expect(q.take("a")).toBe(false);
  });
});
