/**
 * Histogram observations of the request path kept as plain numbers and folded into prom-client when the
 * registry is read (a scrape of `/metrics`, or a metric's `get()`), instead of one prom-client `observe` per
 * call (each validates the labels and builds their hash string). Run {@link HistogramBatch.flush} from the
 * histograms' `collect` hooks, as `counter-batch.ts` does for counters.
 *
 * Exact: a flush adds each series' pending values in the order they were observed, the sum value by value (the
 * same floating-point order as direct observes), the count and the bucket counts (integers) per bucket at its
 * end; what is read equals what direct observes would have given. Values go straight into the series prom-client
 * keeps (prom-client 15's `hashMap` entries, found by the key prom-client itself makes, computed once per label
 * set, and checked before use); a series prom-client does not hold yet gets its first value through `observe`,
 * which creates it; with any other storage shape every value goes through `observe`.
 *
 * Memory: pending values live in one list per batch, emptied at each flush; when nobody reads the registry the
 * batch flushes itself once `maxPending` values wait, so it never holds more than `maxPending` values (a number
 * and a series reference each, 16 bytes) plus one handle per label set ever used (label values are bounded, see
 * `metrics.ts`).
 */
import { createRequire } from "node:module";
import type { Histogram } from "prom-client";

/** prom-client 15's storage of one histogram series (`lib/histogram.js`, `createBaseValues`). */
interface StoredSeries {
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

/** The parts of a prom-client 15 `Histogram` a flush writes to directly. */
interface HistogramInternals {
  name?: string;
  hashMap?: Record<string, StoredSeries | undefined>;
  upperBounds?: readonly number[];
  sortedLabelNames?: readonly string[];
  enableExemplars?: boolean;
}

type HashObject = (labels: Readonly<Record<string, string>>, sortedLabelNames: readonly string[]) => string;

/** prom-client's own series key (`lib/util.js`), or undefined when this prom-client has none. */
const hashObject = ((): HashObject | undefined => {
  try {
    const util = createRequire(import.meta.url)("prom-client/lib/util.js") as { hashObject?: unknown };
    return typeof util.hashObject === "function" ? (util.hashObject as HashObject) : undefined;
  } catch {
    return undefined;
  }
})();

/**
 * One label set of one histogram. Made by {@link HistogramBatch.series}; callers keep it per label set and use it
 * with the batch that made it only.
 */
export interface PendingObservations {
  readonly histogram: Histogram<string>;
  readonly labels: Readonly<Record<string, string>>;
  /** prom-client's key of the series, when its storage can be written to directly. */
  readonly hash: string | undefined;
  /** The histogram's bucket upper bounds, ascending. */
  readonly bounds: readonly number[];
  /** The flush that last resolved {@link stored} and {@link offset}. */
  flushed: number;
  /** prom-client's storage of the series during the current flush; undefined: through `observe`. */
  stored: StoredSeries | undefined;
  /** Where the series' bucket counts of the current flush start in that flush's scratch list. */
  offset: number;
}

/** How many values a batch holds at most before it flushes without being read. */
export const DEFAULT_MAX_PENDING = 65_536;

/** Pending observations of several histograms; see the module comment. */
export class HistogramBatch {
  private values: number[] = [];
  private owners: PendingObservations[] = [];
  private flushes = 0;

  /** @param maxPending values held at most (≥ 1) before the batch flushes on its own. */
  constructor(private readonly maxPending = DEFAULT_MAX_PENDING) {}

  /** Values observed and not yet handed to prom-client (≤ `maxPending`). */
  get pending(): number {
    return this.values.length;
  }

  /**
   * A handle on the series of `histogram` with `labels`, for {@link observe}. `labels` is kept as given (do not
   * change it afterwards).
   * @throws Error when `labels` names a label the histogram does not have, or the histogram keeps exemplars.
   */
  series(histogram: Histogram<string>, labels: Readonly<Record<string, string>>): PendingObservations {
    const internals = histogram as unknown as HistogramInternals;
    if (internals.enableExemplars === true) throw new Error(`${internals.name}: exemplars are not batched`);
    histogram.labels(labels); // validates the label names, as observe would
    const { hashMap, upperBounds, sortedLabelNames } = internals;
    const direct =
      hashObject !== undefined &&
      typeof hashMap === "object" &&
      Array.isArray(upperBounds) &&
      Array.isArray(sortedLabelNames);
    return {
      histogram,
      labels,
      hash: direct ? hashObject(labels, sortedLabelNames) : undefined,
      bounds: direct ? upperBounds : [],
      flushed: -1,
      stored: undefined,
      offset: 0,
    };
  }

  /**
   * Observes `value` in `series`; prom-client gets it at the next {@link flush}.
   * @throws TypeError when `value` is not a finite number (as prom-client's `observe`).
   */
  observe(series: PendingObservations, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    this.values.push(value);
    this.owners.push(series);
    if (this.values.length >= this.maxPending) this.flush();
  }

  /**
   * Hands every pending value to prom-client, in order: sums and counts value by value, bucket counts added
   * per bucket at the end. Cheap when nothing is pending.
   */
  flush(): void {
    const { values, owners } = this;
    if (values.length === 0) return;
    this.values = [];
    this.owners = [];
    const flush = this.flushes++;
    /** The series written directly in this flush, and per bucket of each the values that fell in it. */
    const written: PendingObservations[] = [];
    const scratch: number[] = [];
    const writeDirectly = (series: PendingObservations) => {
      series.offset = scratch.length;
      for (let b = 0; b < series.bounds.length; b++) scratch.push(0);
      written.push(series);
    };
    for (let i = 0; i < values.length; i++) {
      const series = owners[i] as PendingObservations;
      const value = values[i] as number;
      if (series.flushed !== flush) {
        // The series' first value in this flush: prom-client's storage of it, or prom-client creates it.
        series.flushed = flush;
        series.stored = storedSeries(series);
        if (series.stored === undefined) {
          series.histogram.observe(series.labels, value);
          series.stored = storedSeries(series);
          if (series.stored !== undefined) writeDirectly(series);
          continue;
        }
        writeDirectly(series);
      }
      const { stored } = series;
      if (stored === undefined) {
        series.histogram.observe(series.labels, value);
        continue;
      }
      stored.sum += value;
      stored.count += 1;
      const bucket = bucketOf(series.bounds, value);
      if (bucket >= 0) scratch[series.offset + bucket] = (scratch[series.offset + bucket] ?? 0) + 1;
    }
    for (const series of written) addBuckets(series, scratch);
  }
}

/** prom-client's storage of `series` if it has the expected shape, else undefined. */
function storedSeries(series: PendingObservations): StoredSeries | undefined {
  if (series.hash === undefined) return undefined;
  const stored = (series.histogram as unknown as HistogramInternals).hashMap?.[series.hash];
  return typeof stored?.sum === "number" &&
    typeof stored.count === "number" &&
    typeof stored.bucketValues === "object"
    ? stored
    : undefined;
}

/** The index of the first bound ≥ `value`, or -1 past the last (the `+Inf` bucket prom-client only counts). */
function bucketOf(bounds: readonly number[], value: number): number {
  for (let b = 0; b < bounds.length; b++) if (value <= (bounds[b] as number)) return b;
  return -1;
}

/** Adds a series' bucket counts of this flush (in `scratch` from its offset) to prom-client's buckets. */
function addBuckets(series: PendingObservations, scratch: number[]): void {
  const { stored, bounds, offset } = series;
  if (stored === undefined) return;
  for (let b = 0; b < bounds.length; b++) {
    const count = scratch[offset + b] ?? 0;
    const bound = bounds[b] as number;
    if (count > 0 && Object.hasOwn(stored.bucketValues, bound)) {
      stored.bucketValues[bound] = (stored.bucketValues[bound] ?? 0) + count;
    }
  }
}
