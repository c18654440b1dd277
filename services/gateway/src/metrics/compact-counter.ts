/**
 * A prom-client `Counter` whose series live in a {@link SeriesStore} (a number per label set in one shared
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
import { getLabels, validateLabel } from "./prom-internals.js";
import { LabelIndex, type Labels, labelKey, SeriesStore } from "./series-store.js";

/** The parts of prom-client's `Counter` this class reads (not in its typings). */
interface CounterFields {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  labelNames: readonly string[];
  collect?: () => unknown;
  hashMap?: unknown;
}

/** A counter's configuration, and the index of its label sets when shared with other counters. */
export interface CompactCounterConfiguration<T extends string> extends CounterConfiguration<T> {
  /** Shared with counters of the same label names; a new one when absent. */
  index?: LabelIndex;
}

/** A counter storing its series compactly; see the module comment. */
export class CompactCounter<T extends string = string> extends Counter<T> {
  private index!: LabelIndex;
  private store!: SeriesStore;

  /**
   * @throws Error as prom-client's `Counter`, when `enableExemplars` is set, or when `index` serves other label
   * names.
   */
  constructor({ index, ...config }: CompactCounterConfiguration<T>) {
    if (config.enableExemplars === true) throw new Error(`${config.name}: exemplars are not supported`);
    super(config);
    const fields = this.fields();
    delete fields.hashMap; // prom-client's storage, unused here
    this.index = index ?? new LabelIndex(fields.labelNames);
    if (this.index.sortedLabelNames.join() !== [...fields.labelNames].sort().join()) {
      throw new Error(`${config.name}: its label index serves other label names`);
    }
    this.store = new SeriesStore(1);
    this.reset();
  }

  /**
   * The slot of `labels`, for {@link add}; made once per label set (per index), without creating the series
   * (the first `add` does). `labels` is kept as given (do not change it afterwards).
   * @throws Error when `labels` names a label the counter does not have.
   */
  series(labels: LabelValues<T>): number {
    validateLabel(this.fields().labelNames, labels as Labels);
    return this.index.slotOf(labels as Labels);
  }

  /**
   * Adds `value` to the series of `slot` (from {@link series}), as `inc(labels, value)` would.
   * @throws TypeError when `value` is not finite; Error when it is negative.
   */
  add(slot: number, value: number): void {
    this.addTo(slot, this.index.labelsOf(slot), value);
  }

  /** prom-client's `inc` (installed as `inc` by its constructor). */
  incWithoutExemplar(labels?: unknown, value?: unknown): { labelHash: string } {
    let hash = "";
    let given: Labels = {};
    let amount = value;
    if (labels !== null && typeof labels === "object") {
      given = labels as Labels;
      hash = labelKey(given, this.index.sortedLabelNames);
      validateLabel(this.fields().labelNames, given);
    } else amount = labels;
    this.addTo(this.index.slotOf(given), given, amount ?? 1);
    return { labelHash: hash };
  }

  override remove(...args: unknown[]): void {
    const { labelNames } = this.fields();
    const labels = getLabels(labelNames, args);
    validateLabel(labelNames, labels);
    const slot = this.index.find(labels);
    if (slot !== undefined) this.store.remove(slot);
  }

  override reset(): void {
    if (this.store === undefined) return; // prom-client's constructor calls it before this one's fields exist
    this.store.reset();
    if (this.fields().labelNames.length === 0) this.store.revive(this.index.slotOf({}), {}); // at 0, as prom-client
  }

  override async get(): ReturnType<Counter<T>["get"]> {
    const { name, help, type, aggregator, collect } = this.fields();
    if (collect) {
      const pending = collect.call(this);
      if (pending instanceof Promise) await pending;
    }
    const { data, order, labels } = this.store;
    const values = order.map((slot) => ({ value: data[slot] as number, labels: labels[slot] as Labels }));
    const result = { help, name, type, values, aggregator };
    return result as unknown as Awaited<ReturnType<Counter<T>["get"]>>;
  }

  private fields(): CounterFields {
    return this as unknown as CounterFields;
  }

  /** prom-client's checks, then the value added (a new series starts at it, with `labels`). */
  private addTo(slot: number, labels: Labels, value: unknown): void {
    if (value && !Number.isFinite(value))
      throw new TypeError(`Value is not a valid number: ${format(value)}`);
    if ((value as number) < 0) throw new Error("It is not possible to decrease a counter");
    const { store } = this;
    if (store.isLive(slot)) store.data[slot] = (store.data[slot] as number) + (value as number);
    else {
      store.revive(slot, labels);
      store.data[slot] = value as number;
    }
  }
}
