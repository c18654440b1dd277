/**
 * Counters of the chat path added up in plain numbers per label set and folded into prom-client when the
 * registry is read (a scrape of `/metrics`, or a metric's `get()`), instead of one prom-client `inc` per call
 * (each validates the labels and builds their hash string). Whoever reads the registry sees the same values as
 * if every call had been added at once: each batched counter flushes the whole batch from its `collect` hook,
 * which prom-client runs before reporting it.
 *
 * Memory: one entry per label set ever used (as prom-client keeps itself); label values are bounded (see
 * `metrics.ts`), so is this.
 */
import type { Counter } from "prom-client";

/** One label set of one counter: the amount not yet handed to prom-client. Made by {@link CounterBatch.series}. */
export interface PendingSeries {
  readonly counter: Counter<string>;
  readonly labels: Readonly<Record<string, string>>;
  value: number;
  /** In the batch's list of series to flush. */
  queued: boolean;
}

/** Pending increments of several counters; see the module comment. */
export class CounterBatch {
  private readonly queue: PendingSeries[] = [];

  /** A handle on the series of `counter` with `labels`, for {@link add}; callers keep it per label set. */
  series(counter: Counter<string>, labels: Readonly<Record<string, string>>): PendingSeries {
    return { counter, labels, value: 0, queued: false };
  }

  /** Adds `value` (≥ 0, finite) to `series`; prom-client gets it at the next {@link flush}. */
  add(series: PendingSeries, value: number): void {
    series.value += value;
    if (!series.queued) {
      series.queued = true;
      this.queue.push(series);
    }
  }

  /**
   * Hands every pending amount to prom-client (a series added with 0 is created at 0, as `inc(labels, 0)`
   * does). Cheap when nothing is pending; run from the counters' `collect` hooks.
   */
  flush(): void {
    for (const series of this.queue) {
      series.counter.inc(series.labels, series.value);
      series.value = 0;
      series.queued = false;
    }
    this.queue.length = 0;
  }
}

/**
 * A key naming a label set without ambiguity: each value is prefixed by its length, so no value can run into
 * the next whatever characters it holds. Built in one piece (a flat string): a key built by `+=` is a tree of
 * V8 cons strings, which a Map keeps as is, about 3.5 times the memory (782 against 212 bytes per entry with a
 * key hash among four labels, measured on node 20), and slower to look up.
 */
export function seriesKey(values: readonly string[]): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as string;
    parts[i] = `${value.length}:${value}|`;
  }
  return parts.join("");
}
