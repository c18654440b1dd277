/**
 * A histogram that reads as a prom-client `Histogram` but keeps its series in one shared `Float64Array` (per
 * series: sum, count, then one count per bucket) instead of prom-client's object per series with its own bucket
 * dictionary (about 4 KB per label set with 15 buckets; here 8 bytes × (buckets + 2), plus the label object and
 * its key string). For histograms with one series per virtual key. It stands alone: it implements prom-client's
 * public `Histogram` typings and joins registries through `registerMetric` (`metric-head.ts`), no prom-client
 * class or private field involved.
 *
 * Reads are what a plain prom-client 15 `Histogram` with the same observations gives, to the byte: `get()`,
 * the registry's text and JSON (so cluster aggregation), in the same series order (first observe, or `zero`,
 * first), the same label objects (those of the series' first observe), sums added value by value. The registry
 * writes the text from {@link CompactHistogram.getForPromString} (faster; see there). prom-client's public API
 * works unchanged
 * (`observe`, `labels`, `startTimer`, `zero`, `remove`, `reset`); the request path uses
 * {@link CompactHistogram.series} once per label set and {@link CompactHistogram.observeSeries} per value, which
 * skips building the labels' key. Exemplars are not supported.
 *
 * Memory: slots are never freed (`remove` and `reset` empty them; the same label set reuses its slot); label
 * values are bounded (see `metrics.ts`), so is this.
 */
import { format } from "node:util";
import type { Aggregator, Histogram, HistogramConfiguration, LabelValues } from "prom-client";
import { checkLabelNames, labelsOfArgs } from "./label-args.js";
import { type MetricHead, metricHead, registerMetric, runCollect } from "./metric-head.js";
import { LabelIndex, type Labels, SeriesStore } from "./series-store.js";

/** One value of `get()`, in the shape (and key order) prom-client's histogram gives. */
interface ExportValue {
  value: number;
  metricName: string;
  exemplar: null | undefined;
  labels: Record<string, string | number>;
}

/** One line of `getForPromString()`: its own labels, and its series' labels shared by every line of the series. */
interface PromStringValue {
  labels: Labels;
  sharedLabels: Labels;
  value: number;
  metricName: string;
}

/** prom-client's default buckets, seconds. */
const defaultBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A histogram storing its series compactly; see the module comment. */
export class CompactHistogram<T extends string = string> implements Histogram<T>, MetricHead {
  name: string;
  readonly help: string;
  readonly type = "histogram";
  readonly aggregator: Aggregator;
  readonly labelNames: readonly string[];
  readonly collect: MetricHead["collect"];
  /** The buckets' upper bounds, ascending. */
  readonly upperBounds: readonly number[];
  private readonly index: LabelIndex;
  /** Per slot: sum, count, then the count of each bucket (not cumulative). */
  private readonly store: SeriesStore;

  /**
   * @throws Error as prom-client's `Histogram` (name, help, label names, `le` as a label, a name already
   * registered), or when `enableExemplars` is set or two bounds are equal.
   */
  constructor({ registers, buckets, ...config }: HistogramConfiguration<T>) {
    const head = metricHead(config, "histogram");
    this.name = head.name;
    this.help = head.help;
    this.aggregator = head.aggregator;
    this.labelNames = head.labelNames;
    this.collect = head.collect;
    if (this.labelNames.includes("le")) throw new Error("le is a reserved label keyword");
    this.upperBounds = Object.freeze([...(buckets ?? defaultBuckets)]);
    if (new Set(this.upperBounds).size !== this.upperBounds.length) {
      throw new Error(`${head.name}: bucket bounds must be distinct`);
    }
    this.index = new LabelIndex(this.labelNames);
    this.store = new SeriesStore(this.upperBounds.length + 2);
    if (this.labelNames.length === 0) this.zero({} as LabelValues<T>); // as prom-client: present from the start
    registerMetric(this, registers);
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
    checkLabelNames(this.labelNames, labels as Labels);
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
    const bounds = this.upperBounds;
    for (let b = 0; b < bounds.length; b++) {
      if (value <= (bounds[b] as number)) {
        data[base + 2 + b] = (data[base + 2 + b] as number) + 1;
        return;
      }
    }
  }

  /**
   * prom-client's `observe(labels, value)` or `observe(value)`: labels validated, then the value.
   * @throws Error on an unknown label; TypeError when the value is not a finite number.
   */
  observe(labels: unknown, value?: unknown): void {
    const given = labels === 0 ? 0 : labels || {};
    if (given !== null && typeof given === "object") this.observeLabels(given as Labels, value);
    else this.observeLabels({}, given);
  }

  /**
   * Starts a timer: the function returned observes, in the series of `labels` and its own `labels`, the seconds
   * elapsed, and returns them.
   */
  startTimer(labels?: LabelValues<T>): (labels?: LabelValues<T>) => number {
    const start = process.hrtime();
    return (endLabels) => {
      const delta = process.hrtime(start);
      const value = delta[0] + delta[1] / 1e9;
      this.observe({ ...labels, ...endLabels }, value);
      return value;
    };
  }

  /**
   * prom-client's `labels(...values)` or `labels(object)`: `observe` and `startTimer` bound to those labels.
   * @throws Error on an unknown label, or when values are given and their number is not that of the label names.
   */
  labels(...args: unknown[]): Histogram.Internal<T> {
    const labels = labelsOfArgs(this.labelNames, args);
    checkLabelNames(this.labelNames, labels);
    return {
      observe: (value: number) => this.observeLabels(labels, value),
      startTimer: () => this.startTimer(labels as LabelValues<T>),
    };
  }

  /** Gives the series of `labels` zero observations (kept in place if it exists, else added last). */
  zero(labels: LabelValues<T>): void {
    this.store.revive(this.index.slotOf(labels as Labels), labels as Labels);
  }

  /** prom-client's `remove(...values)` or `remove(object)`. @throws Error on an unknown label. */
  remove(...args: unknown[]): void {
    const labels = labelsOfArgs(this.labelNames, args);
    checkLabelNames(this.labelNames, labels);
    const slot = this.index.find(labels);
    if (slot !== undefined) this.store.remove(slot);
  }

  /** Drops every series (a histogram without labels too, as prom-client's). */
  reset(): void {
    this.store.reset();
  }

  /**
   * What prom-client's `Histogram.get()` returns for the same observations, the collect hook run first: per
   * series, its cumulative buckets (`le` first, then the series' labels), `+Inf`, `_sum` and `_count`.
   */
  async get(): ReturnType<Histogram<T>["get"]> {
    await runCollect(this);
    const { name, help, type, aggregator, upperBounds } = this;
    const bucketName = `${name}_bucket`;
    const sumName = `${name}_sum`;
    const countName = `${name}_count`;
    const values: ExportValue[] = [];
    const { data, stride, order, labels } = this.store;
    for (const slot of order) {
      const base = slot * stride;
      const shared = labels[slot] as Labels;
      let acc = 0;
      for (let b = 0; b < upperBounds.length; b++) {
        acc += data[base + 2 + b] as number;
        values.push({
          value: acc,
          metricName: bucketName,
          exemplar: null,
          labels: { le: upperBounds[b] as number, ...shared },
        });
      }
      const count = data[base + 1] as number;
      values.push({
        value: count,
        metricName: bucketName,
        exemplar: null,
        labels: { le: "+Inf", ...shared },
      });
      values.push({
        value: data[base] as number,
        metricName: sumName,
        exemplar: undefined,
        labels: { ...shared },
      });
      values.push({ value: count, metricName: countName, exemplar: undefined, labels: { ...shared } });
    }
    const result = { name, help, type, values, aggregator };
    // prom-client's typings name `type` as an enum and list `collect`; its metrics return the string, as here.
    return result as unknown as Awaited<ReturnType<Histogram<T>["get"]>>;
  }

  /**
   * The same lines as {@link get}, for the registry's text only, in the shape prom-client's own histogram gives
   * it: a line's `labels` hold `le` alone and its series' labels come as `sharedLabels`, the same object on every
   * line of a series, so that the registry formats them once per series (it caches them by object) instead of on
   * each of the series' bucket lines (about 4 times faster a text scrape of the per-key latency histogram).
   * prom-client 15's registry prefers this method to `get()` when a metric has it; it is in neither its typings
   * nor its README, so a registry that ignores it writes the same text from `get()` (tested), only slower.
   */
  async getForPromString(): Promise<{
    name: string;
    help: string;
    type: string;
    values: PromStringValue[];
    aggregator: string;
  }> {
    await runCollect(this);
    const { name, help, type, aggregator, upperBounds } = this;
    const bucketName = `${name}_bucket`;
    const sumName = `${name}_sum`;
    const countName = `${name}_count`;
    const values: PromStringValue[] = [];
    const { data, stride, order, labels } = this.store;
    for (const slot of order) {
      const base = slot * stride;
      const sharedLabels = labels[slot] as Labels;
      let acc = 0;
      for (let b = 0; b < upperBounds.length; b++) {
        acc += data[base + 2 + b] as number;
        values.push({
          labels: { le: upperBounds[b] as number },
          sharedLabels,
          value: acc,
          metricName: bucketName,
        });
      }
      const count = data[base + 1] as number;
      values.push({ labels: { le: "+Inf" }, sharedLabels, value: count, metricName: bucketName });
      values.push({ labels: {}, sharedLabels, value: data[base] as number, metricName: sumName });
      values.push({ labels: {}, sharedLabels, value: count, metricName: countName });
    }
    return { name, help, type, values, aggregator };
  }

  /** prom-client's `observe(labels)(value)`: labels validated, then the value. */
  private observeLabels(labels: Labels, value: unknown): void {
    checkLabelNames(this.labelNames, labels);
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${format(value)}`);
    const slot = this.index.slotOf(labels);
    if (!this.store.isLive(slot)) this.store.revive(slot, labels);
    this.observeSeries(slot, value as number);
  }
}
