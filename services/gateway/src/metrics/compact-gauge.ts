/**
 * A prom-client `Gauge` whose series live in a {@link ScalarSeries} (a number per label set in one shared
 * `Float64Array`) instead of prom-client's object per series and its key, for gauges with one series per virtual
 * key. Gauges with the same label names can share one {@link LabelIndex} (a key's three budget gauges), so they
 * share its keys too.
 *
 * Reads are what a plain prom-client 15 `Gauge` given the same calls reads: `get()` and the registry's text and
 * JSON (so cluster aggregation), in the same series order, with the same label objects (a `set`'s, or a series'
 * first `inc`/`dec`'s). The whole prom-client API works unchanged (`set`, `inc`, `dec`, `setToCurrentTime`,
 * `startTimer`, `labels`, `remove`, `reset`); the request path uses {@link CompactGauge.series} once per label
 * set and {@link CompactGauge.setSeries} per value: always current, no batch needed.
 */
import { format } from "node:util";
import { Gauge, type GaugeConfiguration, type LabelValues } from "prom-client";
import { type MetricFields, runCollect, ScalarSeries } from "./scalar-series.js";
import type { LabelIndex, Labels } from "./series-store.js";

/** A gauge's configuration, and the index of its label sets when shared with other gauges. */
export interface CompactGaugeConfiguration<T extends string> extends GaugeConfiguration<T> {
  /** Shared with gauges of the same label names; a new one when absent. */
  index?: LabelIndex;
}

/** prom-client's reading of a gauge call's arguments: (labels, value) or (value). */
function callArgs(labels: unknown, value: unknown): { labels: Labels; value: unknown } {
  return labels !== null && typeof labels === "object"
    ? { labels: labels as Labels, value }
    : { labels: {}, value: labels };
}

/** A gauge storing its series compactly; see the module comment. */
export class CompactGauge<T extends string = string> extends Gauge<T> {
  private scalars!: ScalarSeries;

  /** @throws Error as prom-client's `Gauge`, or when `index` serves other label names. */
  constructor({ index, ...config }: CompactGaugeConfiguration<T>) {
    super(config);
    const fields = this.fields();
    this.scalars = new ScalarSeries(fields.name, fields.labelNames, index);
  }

  /**
   * The slot of `labels`, for {@link setSeries}; made once per label set (per index), without creating the series
   * (the first `setSeries` does). `labels` is kept as given (do not change it afterwards).
   * @throws Error when `labels` names a label the gauge does not have.
   */
  series(labels: LabelValues<T>): number {
    return this.scalars.slotOf(labels as Labels);
  }

  /**
   * Sets the series of `slot` (from {@link series}) to `value` (any number, ±Infinity included), as
   * `set(labels, value)` would.
   */
  setSeries(slot: number, value: number): void {
    this.scalars.setSlot(slot, value);
  }

  /** @throws TypeError when the value is not a number; Error on an unknown label. */
  override set(labels: unknown, value?: unknown): void {
    const call = callArgs(labels, value);
    if (typeof call.value !== "number")
      throw new TypeError(`Value is not a valid number: ${format(call.value)}`);
    this.scalars.set(this.scalars.slotOf(call.labels), call.labels, call.value);
  }

  /** @throws TypeError when the value is not a number; Error on an unknown label. */
  override inc(labels?: unknown, value?: unknown): void {
    const call = callArgs(labels, value);
    this.addDelta(call.labels, call.value === undefined ? 1 : call.value);
  }

  /** @throws TypeError when the value is not a number; Error on an unknown label. */
  override dec(labels?: unknown, value?: unknown): void {
    const call = callArgs(labels, value);
    this.addDelta(call.labels, -(call.value === undefined ? 1 : (call.value as number)));
  }

  override remove(...args: unknown[]): void {
    this.scalars.remove(args);
  }

  override reset(): void {
    this.scalars?.reset(); // prom-client's constructor calls it before this one's fields exist
  }

  override async get(): ReturnType<Gauge<T>["get"]> {
    const fields = this.fields();
    await runCollect(fields);
    const { name, help, type, aggregator } = fields;
    const result = { help, name, type, values: this.scalars.values(), aggregator };
    return result as unknown as Awaited<ReturnType<Gauge<T>["get"]>>;
  }

  /** prom-client's `_getValue`: the value of the series of `labels`, 0 when there is none. */
  _getValue(labels?: Labels): number {
    return this.scalars.valueOf(labels ?? {});
  }

  private fields(): MetricFields {
    return this as unknown as MetricFields;
  }

  /** prom-client's `setDelta`: the delta checked, the labels validated, then added. */
  private addDelta(labels: Labels, delta: unknown): void {
    if (typeof delta !== "number") throw new TypeError(`Delta is not a valid number: ${format(delta)}`);
    this.scalars.add(this.scalars.slotOf(labels), labels, delta);
  }
}
