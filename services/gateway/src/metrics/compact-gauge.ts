/**
 * A gauge that reads as a prom-client `Gauge` but keeps its series in a {@link ScalarSeries} (a number per label
 * set in one shared `Float64Array`) instead of prom-client's object per series and its key, for gauges with one
 * series per virtual key. It stands alone: it implements prom-client's public `Gauge` typings and joins
 * registries through `registerMetric` (`metric-head.ts`), no prom-client class or private field involved.
 * Gauges with the same label names can share one {@link LabelIndex} (a key's three budget gauges), so they share
 * its keys too.
 *
 * Reads are what a plain prom-client 15 `Gauge` given the same calls reads: `get()` and the registry's text and
 * JSON (so cluster aggregation), in the same series order, with the same label objects (a `set`'s, or a series'
 * first `inc`/`dec`'s). prom-client's whole public API works unchanged (`set`, `inc`, `dec`, `setToCurrentTime`,
 * `startTimer`, `labels`, `remove`, `reset`); the request path uses {@link CompactGauge.series} once per label
 * set and {@link CompactGauge.setSeries} per value: always current, no batch needed.
 */
import { format } from "node:util";
import type { Aggregator, Gauge, GaugeConfiguration, LabelValues } from "prom-client";
import { labelsOfArgs } from "./label-args.js";
import { type MetricHead, metricHead, registerMetric, runCollect } from "./metric-head.js";
import { ScalarSeries } from "./scalar-series.js";
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
export class CompactGauge<T extends string = string> implements Gauge<T>, MetricHead {
  name: string;
  readonly help: string;
  readonly type = "gauge";
  readonly aggregator: Aggregator;
  readonly labelNames: readonly string[];
  readonly collect: MetricHead["collect"];
  private readonly scalars: ScalarSeries;

  /**
   * @throws Error as prom-client's `Gauge` (name, help, label names, a name already registered), when
   * `enableExemplars` is set, or when `index` serves other label names.
   */
  constructor({ index, registers, ...config }: CompactGaugeConfiguration<T>) {
    const head = metricHead(config, "gauge");
    this.name = head.name;
    this.help = head.help;
    this.aggregator = head.aggregator;
    this.labelNames = head.labelNames;
    this.collect = head.collect;
    this.scalars = new ScalarSeries(head.name, head.labelNames, index);
    registerMetric(this, registers);
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

  /**
   * prom-client's `set(labels, value)` or `set(value)`.
   * @throws TypeError when the value is not a number; Error on an unknown label.
   */
  set(labels: unknown, value?: unknown): void {
    const call = callArgs(labels, value);
    if (typeof call.value !== "number")
      throw new TypeError(`Value is not a valid number: ${format(call.value)}`);
    this.scalars.set(this.scalars.slotOf(call.labels), call.labels, call.value);
  }

  /**
   * prom-client's `inc(labels, value)` or `inc(value)` (by 1 when no value).
   * @throws TypeError when the value is not a number; Error on an unknown label.
   */
  inc(labels?: unknown, value?: unknown): void {
    const call = callArgs(labels, value);
    this.addDelta(call.labels, call.value === undefined ? 1 : call.value);
  }

  /**
   * prom-client's `dec(labels, value)` or `dec(value)` (by 1 when no value).
   * @throws TypeError when the value is not a number; Error on an unknown label.
   */
  dec(labels?: unknown, value?: unknown): void {
    const call = callArgs(labels, value);
    this.addDelta(call.labels, -(call.value === undefined ? 1 : (call.value as number)));
  }

  /** Sets the series of `labels` (none: the unlabelled one) to the current time, seconds since the epoch. */
  setToCurrentTime(labels?: LabelValues<T>): void {
    const now = Date.now() / 1000;
    if (labels === undefined) this.set(now);
    else this.set(labels, now);
  }

  /**
   * Starts a timer: the function returned sets the series of `labels` and its own `labels` to the seconds
   * elapsed, and returns them.
   */
  startTimer(labels?: LabelValues<T>): (labels?: LabelValues<T>) => number {
    const start = process.hrtime();
    return (endLabels) => {
      const delta = process.hrtime(start);
      const value = delta[0] + delta[1] / 1e9;
      this.set({ ...labels, ...endLabels }, value);
      return value;
    };
  }

  /**
   * prom-client's `labels(...values)` or `labels(object)`: the gauge's calls bound to those labels.
   * @throws Error on an unknown label, or when values are given and their number is not that of the label names.
   */
  labels(...args: unknown[]): Gauge.Internal<T> {
    const labels = labelsOfArgs(this.labelNames, args);
    this.scalars.slotOf(labels); // validates, as prom-client
    return {
      inc: (value?: number) => this.inc(labels, value),
      dec: (value?: number) => this.dec(labels, value),
      set: (value: number) => this.set(labels, value),
      setToCurrentTime: () => this.setToCurrentTime(labels as LabelValues<T>),
      startTimer: () => this.startTimer(labels as LabelValues<T>),
    };
  }

  /** prom-client's `remove(...values)` or `remove(object)`. @throws Error on an unknown label. */
  remove(...args: unknown[]): void {
    this.scalars.remove(args);
  }

  /** Drops every series (a gauge without labels keeps one, at 0). */
  reset(): void {
    this.scalars.reset();
  }

  /** What prom-client's `Gauge.get()` returns for the same calls, the collect hook run first. */
  async get(): ReturnType<Gauge<T>["get"]> {
    await runCollect(this);
    const { name, help, type, aggregator } = this;
    const result = { help, name, type, values: this.scalars.values(), aggregator };
    // prom-client's typings name `type` as an enum and list `collect`; its metrics return the string, as here.
    return result as unknown as Awaited<ReturnType<Gauge<T>["get"]>>;
  }

  /** The value of the series of `labels` (none: the unlabelled one), 0 when there is none. */
  valueOf(labels?: LabelValues<T>): number {
    return this.scalars.valueOf((labels ?? {}) as Labels);
  }

  /** prom-client's `setDelta`: the delta checked, the labels validated, then added. */
  private addDelta(labels: Labels, delta: unknown): void {
    if (typeof delta !== "number") throw new TypeError(`Delta is not a valid number: ${format(delta)}`);
    this.scalars.add(this.scalars.slotOf(labels), labels, delta);
  }
}
