/**
 * A prom-client `Counter` whose series live in a {@link ScalarSeries} (a number per label set in one shared
 * `Float64Array`) instead of prom-client's object per series and its key, for counters with one series per
 * virtual key. Counters with the same label names can share one {@link LabelIndex} (the three token counters),
 * so they share its keys too.
 *
 * Reads are what a plain prom-client 15 `Counter` given the same calls reads: `get()` and the registry's text and
 * JSON (so cluster aggregation), in the same series order, with the same label objects (those of a series' first
 * `inc`). The prom-client API works unchanged (`inc`, `labels`, `remove`, `reset`); the request path uses
 * {@link CompactCounter.series} once per label set and {@link CompactCounter.add} per value: always current, no
 * batch needed. Exemplars are not supported.
 */
import { format } from "node:util";
import { Counter, type CounterConfiguration, type LabelValues } from "prom-client";
import { type MetricFields, runCollect, ScalarSeries } from "./scalar-series.js";
import { type LabelIndex, type Labels, labelKey } from "./series-store.js";

/** A counter's configuration, and the index of its label sets when shared with other counters. */
export interface CompactCounterConfiguration<T extends string> extends CounterConfiguration<T> {
  /** Shared with counters of the same label names; a new one when absent. */
  index?: LabelIndex;
}

/** A counter storing its series compactly; see the module comment. */
export class CompactCounter<T extends string = string> extends Counter<T> {
  private scalars!: ScalarSeries;

  /**
   * @throws Error as prom-client's `Counter`, when `enableExemplars` is set, or when `index` serves other label
   * names.
   */
  constructor({ index, ...config }: CompactCounterConfiguration<T>) {
    if (config.enableExemplars === true) throw new Error(`${config.name}: exemplars are not supported`);
    super(config);
    const fields = this.fields();
    this.scalars = new ScalarSeries(fields.name, fields.labelNames, index);
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

  /** prom-client's `inc` (installed as `inc` by its constructor): labels validated, then the value. */
  incWithoutExemplar(labels?: unknown, value?: unknown): { labelHash: string } {
    let hash = "";
    let given: Labels = {};
    let amount = value;
    if (labels !== null && typeof labels === "object") {
      given = labels as Labels;
      hash = labelKey(given, this.scalars.index.sortedLabelNames);
    } else amount = labels;
    this.addTo(this.scalars.slotOf(given), given, amount ?? 1);
    return { labelHash: hash };
  }

  override remove(...args: unknown[]): void {
    this.scalars.remove(args);
  }

  override reset(): void {
    this.scalars?.reset(); // prom-client's constructor calls it before this one's fields exist
  }

  override async get(): ReturnType<Counter<T>["get"]> {
    const fields = this.fields();
    await runCollect(fields);
    const { name, help, type, aggregator } = fields;
    const result = { help, name, type, values: this.scalars.values(), aggregator };
    return result as unknown as Awaited<ReturnType<Counter<T>["get"]>>;
  }

  private fields(): MetricFields {
    return this as unknown as MetricFields;
  }

  /** prom-client's checks, then the value added (a new series starts at it, with `labels`). */
  private addTo(slot: number, labels: Labels, value: unknown): void {
    if (value && !Number.isFinite(value))
      throw new TypeError(`Value is not a valid number: ${format(value)}`);
    if ((value as number) < 0) throw new Error("It is not possible to decrease a counter");
    this.scalars.add(slot, labels, value as number);
  }
}
