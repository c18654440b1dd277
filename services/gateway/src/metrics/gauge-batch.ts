/**
 * Gauges set on the request path kept as the last value per label set and handed to prom-client when the
 * registry is read (a scrape of `/metrics`, or a metric's `get()`), instead of one prom-client `set` per call
 * (each validates the labels and builds their hash string). Run {@link GaugeBatch.flush} from the gauges'
 * `collect` hooks, as `counter-batch.ts` does for counters. A reader sees what the last direct `set` would have
 * left; a series written through the batch must not also be set directly (the batch's value would win).
 *
 * Memory: one handle per label set ever used (as prom-client keeps itself); label values are bounded (see
 * `metrics.ts`), so is this.
 */
import type { Gauge } from "prom-client";

/** One label set of one gauge: its value not yet handed to prom-client. Made by {@link GaugeBatch.series}. */
export interface PendingGauge {
  readonly gauge: Gauge<string>;
  readonly labels: Readonly<Record<string, string>>;
  value: number;
  /** In the batch's list of series to flush. */
  queued: boolean;
}

/** The last values of several gauges; see the module comment. */
export class GaugeBatch {
  private readonly queue: PendingGauge[] = [];

  /**
   * A handle on the series of `gauge` with `labels`, for {@link set}; callers keep it per label set. `labels` is
   * kept as given (do not change it afterwards).
   * @throws Error when `labels` names a label the gauge does not have.
   */
  series(gauge: Gauge<string>, labels: Readonly<Record<string, string>>): PendingGauge {
    gauge.labels(labels); // validates the label names, as set would
    return { gauge, labels, value: 0, queued: false };
  }

  /** Sets `series` to `value` (any number, ±Infinity included); prom-client gets the last one at {@link flush}. */
  set(series: PendingGauge, value: number): void {
    series.value = value;
    if (!series.queued) {
      series.queued = true;
      this.queue.push(series);
    }
  }

  /** Hands every series' last value to prom-client. Cheap when nothing is pending. */
  flush(): void {
    for (const series of this.queue) {
      series.gauge.set(series.labels, series.value);
      series.queued = false;
    }
    this.queue.length = 0;
  }
}
