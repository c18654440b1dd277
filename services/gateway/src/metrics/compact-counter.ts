/**
 * A counter that reads as a prom-client `Counter` but keeps its series in a {@link ScalarSeries} (a number per
 * label set in one shared `Float64Array`) instead of prom-client's object per series and its key, for counters
 * with one series per virtual key. It stands alone: it implements prom-client's public `Counter` typings and
 * joins registries through `registerMetric` (`metric-head.ts`), no prom-client class or private field involved.
 * Counters with the same label names can share one {@link LabelIndex} (the three token counters), so they share
 * its keys too.
 *
 * Reads are what a plain prom-client 15 `Counter` given the same calls reads: `get()` and the registry's text and
 * JSON (so cluster aggregation), in the same series order, with the same label objects (those of a series' first
 * `inc`). prom-client's public API works unchanged (`inc`, `labels`, `remove`, `reset`); the request path uses
 * {@link CompactCounter.series} once per label set and {@link CompactCounter.add} per value: always current, no
 * batch needed. Exemplars are not supported.
 */
import { format } from "node:util";
import type { Aggregator, Counter, CounterConfiguration, LabelValues } from "prom-client";
import { labelsOfArgs } from "./label-args.js";
import { type MetricHead, metricHead, registerMetric, runCollect } from "./metric-head.js";
import { ScalarSeries } from "./scalar-series.js";
import type { LabelIndex, Labels } from "./series-store.js";

/** A counter's configuration, and the index of its label sets when shared with other counters. */
export interface CompactCounterConfiguration<T extends string> extends CounterConfiguration<T> {
  /** Shared with counters of the same label names; a new one when absent. */
  index?: LabelIndex;
}

/** A counter storing its series compactly; see the module comment. */
export class CompactCounter<T extends string = string> implements Counter<T>, MetricHead {
  name: string;
  readonly help: string;
  readonly type = "counter";
  readonly aggregator: Aggregator;
  readonly labelNames: readonly string[];
  readonly collect: MetricHead["collect"];
  private readonly scalars: ScalarSeries;

  /**
   * @throws Error as prom-client's `Counter` (name, help, label names, a name already registered), when
   * `enableExemplars` is set, or when `index` serves other label names.
   */
  constructor({ index, registers, ...config }: CompactCounterConfiguration<T>) {
    const head = metricHead(config, "counter");
    this.name = head.name;
    this.help = head.help;
    this.aggregator = head.aggregator;
    this.labelNames = head.labelNames;
    this.collect = head.collect;
    this.scalars = new ScalarSeries(head.name, head.labelNames, index);
    registerMetric(this, registers);
  }

  /**
   * The slot of `labels`, for {@link add}; made once per label set (per index), without creating the series
   * (the first `add` does). `labels` is kept as given (do not change it afterwards).
   * @throws Error when `labels` names a label the counter does not have.
   */
  series(labels: LabelValues<T>): number {
    return this.scalars.slotOf(labels as Labels);
  }

  /**
   * Adds `value` to the series of `slot` (from {@link series}), as `inc(labels, value)` would.
   * @throws TypeError when `value` is not finite; Error when it is negative.
   */
  add(slot: number, value: number): void {
    this.addTo(slot, this.scalars.index.labelsOf(slot), value);
  }

  /**
   * prom-client's `inc(labels, value)` or `inc(value)` (1 when absent): labels validated, then the value.
   * @throws Error on an unknown label or a negative value; TypeError when the value is not finite.
   */
  inc(labels?: unknown, value?: unknown): void {
    let given: Labels = {};
    let amount = value;
    if (labels !== null && typeof labels === "object") given = labels as Labels;
    else amount = labels;
    this.addTo(this.scalars.slotOf(given), given, amount ?? 1);
  }

  /**
   * prom-client's `labels(...values)` or `labels(object)`: `inc` bound to those labels (checked on `inc`).
   * @throws Error when values are given and their number is not that of the label names.
   */
  labels(...args: unknown[]): Counter.Internal {
    const labels = labelsOfArgs(this.labelNames, args);
    return { inc: (value?: number) => this.inc(labels, value) };
  }

  /** prom-client's `remove(...values)` or `remove(object)`. @throws Error on an unknown label. */
  remove(...args: unknown[]): void {
    this.scalars.remove(args);
  }

  /** Drops every series (a counter without labels keeps one, at 0). */
  reset(): void {
    this.scalars.reset();
  }

  /** What prom-client's `Counter.get()` returns for the same calls, the collect hook run first. */
  async get(): ReturnType<Counter<T>["get"]> {
    await runCollect(this);
    const { name, help, type, aggregator } = this;
    const result = { help, name, type, values: this.scalars.values(), aggregator };
    // prom-client's typings name `type` as an enum and list `collect`; its metrics return the string, as here.
    return result as unknown as Awaited<ReturnType<Counter<T>["get"]>>;
  }

  /** prom-client's checks, then the value added (a new series starts at it, with `labels`). */
  private addTo(slot: number, labels: Labels, value: unknown): void {
    if (value && !Number.isFinite(value))
      throw new TypeError(`Value is not a valid number: ${format(value)}`);
    if ((value as number) < 0) throw new Error("It is not possible to decrease a counter");
    this.scalars.add(slot, labels, value as number);
  }
}
