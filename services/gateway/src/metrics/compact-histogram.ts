/**
 * A prom-client `Histogram` whose series live in one shared `Float64Array` (per series: sum, count, then one
 * count per bucket) instead of prom-client's object per series with its own bucket dictionary (about 4 KB per
 * label set with 15 buckets; here 8 bytes × (buckets + 2), plus the label object and prom-client's key string).
 * For histograms with one series per virtual key.
 *
 * Reads are what a plain prom-client 15 `Histogram` with the same observations gives, to the byte: `get()`,
 * the registry's text and JSON (so cluster aggregation), in the same series order (first observe, or `zero`,
 * first), the same label objects (those of the series' first observe), sums added value by value. The
 * prom-client API works unchanged (`observe`, `labels`, `startTimer`, `zero`, `remove`, `reset`); the request
 * path uses {@link CompactHistogram.series} once per label set and {@link CompactHistogram.observeSeries} per
 * value, which skips building the labels' key. Exemplars are not supported.
 *
 * Memory: slots are never freed (`remove` and `reset` empty them; the same label set reuses its slot); label
 * values are bounded (see `metrics.ts`), so is this.
 */
import { format } from "node:util";
import { Histogram, type HistogramConfiguration, type LabelValues } from "prom-client";
import { checkLabelNames, labelsOfArgs } from "./label-args.js";
import { LabelIndex, type Labels, SeriesStore } from "./series-store.js";

/** One value of `getForPromString()`, in the shape (and key order) prom-client's histogram builds. */
interface ExportValue {
  labels: Labels;
  sharedLabels: Labels;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

/** The parts of prom-client's `Histogram` this class reads (not in its typings). */
interface HistogramFields {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  labelNames: readonly string[];
  sortedLabelNames: readonly string[];
  upperBounds: readonly number[];
  collect?: () => unknown;
}

/** A histogram storing its series compactly; see the module comment. */
export class CompactHistogram<T extends string = string> extends Histogram<T> {
  private index!: LabelIndex;
  /** Per slot: sum, count, then the count of each bucket (not cumulative). */
  private store!: SeriesStore;

  /** @throws Error as prom-client's `Histogram`, or when `enableExemplars` is set or two bounds are equal. */
  constructor(config: HistogramConfiguration<T>) {
    if (config.enableExemplars === true) throw new Error(`${config.name}: exemplars are not supported`);
    super(config);
    const fields = this.fields();
    if (new Set(fields.upperBounds).size !== fields.upperBounds.length) {
      throw new Error(`${config.name}: bucket bounds must be distinct`);
    }
    this.index = new LabelIndex(fields.labelNames);
    this.store = new SeriesStore(fields.upperBounds.length + 2);
    if (fields.labelNames.length === 0) this.zero({} as LabelValues<T>); // as prom-client: present from the start
  }

  /** Label sets that have a slot (ever used, even if removed since). */
  get slotCount(): number {
    return this.index.size;
  }

  /** Bytes of the typed arrays holding every slot's numbers (capacity included). */
  get storedBytes(): number {
    return this.store.storedBytes;
  }

  /**
   * The slot of `labels`, for {@link observeSeries}; made once per label set, without creating the series (the
   * first observe does). `labels` is kept as given (do not change it afterwards).
   * @throws Error when `labels` names a label the histogram does not have.
   */
  series(labels: LabelValues<T>): number {
    checkLabelNames(this.fields().labelNames, labels as Labels);
    return this.index.slotOf(labels as Labels);
  }

  /**
   * Observes `value` in the series of `slot` (from {@link series}), as `observe(labels, value)` would.
   * @throws TypeError when `value` is not a finite number.
   */
  observeSeries(slot: number, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${format(value)}`);
    const { store } = this;
    if (!store.isLive(slot)) store.revive(slot, this.index.labelsOf(slot));
    const base = slot * store.stride;
    const { data } = store;
    data[base] = (data[base] as number) + value;
    data[base + 1] = (data[base + 1] as number) + 1;
    const bounds = this.fields().upperBounds;
    for (let b = 0; b < bounds.length; b++) {
      if (value <= (bounds[b] as number)) {
        data[base + 2 + b] = (data[base + 2 + b] as number) + 1;
        return;
      }
    }
  }

  /** prom-client's `observe` (installed as `observe` by its constructor). */
  observeWithoutExemplar(labels: unknown, value?: unknown): void {
    const given = labels === 0 ? 0 : labels || {};
    if (given !== null && typeof given === "object") this.observeLabels(given as Labels, value);
    else this.observeLabels({}, given);
  }

  override labels(...args: unknown[]): Histogram.Internal<T> {
    const { startTimer } = super.labels(...(args as string[])); // validates, as prom-client
    const labels = labelsOfArgs(this.fields().labelNames, args);
    return { observe: (value: number) => this.observeLabels(labels, value), startTimer };
  }

  override zero(labels: LabelValues<T>): void {
    this.store.revive(this.index.slotOf(labels as Labels), labels as Labels);
  }

  override remove(...args: unknown[]): void {
    const { labelNames } = this.fields();
    const labels = labelsOfArgs(labelNames, args);
    checkLabelNames(labelNames, labels);
    const slot = this.index.find(labels);
    if (slot !== undefined) this.store.remove(slot);
  }

  override reset(): void {
    this.store?.reset(); // prom-client's constructor calls it before this one's fields exist
  }

  /** What prom-client's `Histogram.getForPromString` returns (its `get()` and the registry's text use it). */
  async getForPromString(): Promise<{
    name: string;
    help: string;
    type: string;
    values: ExportValue[];
    aggregator: string;
  }> {
    const { name, help, type, aggregator, collect, upperBounds } = this.fields();
    if (collect) {
      const pending = collect.call(this);
      if (pending instanceof Promise) await pending;
    }
    const bucketName = `${name}_bucket`;
    const values: ExportValue[] = [];
    const { data, stride, order, labels } = this.store;
    for (const slot of order) {
      const base = slot * stride;
      const sharedLabels = labels[slot] as Labels;
      let acc = 0;
      for (let b = 0; b < upperBounds.length; b++) {
        acc += data[base + 2 + b] as number;
        values.push(pair({ le: upperBounds[b] as number }, acc, bucketName, null, sharedLabels));
      }
      const count = data[base + 1] as number;
      values.push(pair({ le: "+Inf" }, count, bucketName, null, sharedLabels));
      values.push(pair({}, data[base] as number, `${name}_sum`, undefined, sharedLabels));
      values.push(pair({}, count, `${name}_count`, undefined, sharedLabels));
    }
    return { name, help, type, values, aggregator };
  }

  private fields(): HistogramFields {
    return this as unknown as HistogramFields;
  }

  /** prom-client's `observe(labels)(value)`: labels validated, then the value. */
  private observeLabels(labels: Labels, value: unknown): void {
    checkLabelNames(this.fields().labelNames, labels);
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${format(value)}`);
    const slot = this.index.slotOf(labels);
    if (!this.store.isLive(slot)) this.store.revive(slot, labels);
    this.observeSeries(slot, value as number);
  }
}

/** prom-client's `setValuePair`: the same keys in the same order. */
function pair(
  labels: Labels,
  value: number,
  metricName: string,
  exemplar: null | undefined,
  sharedLabels: Labels,
): ExportValue {
  return { labels, sharedLabels, value, metricName, exemplar };
}
