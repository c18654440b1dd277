/**
 * A bounded queue of finished spans (OTLP JSON texts, `otlp-json.ts`) in front of the trace receiver. Spans are
 * queued as their call ends and sent in batches on a timer, off the request path: a batch is the queued texts
 * joined into one `ExportTraceServiceRequest` body, so sending serialises nothing again. While the receiver is
 * slow or down the queue holds at most `maxSpans` spans and `maxBytes` of span text: beyond that the OLDEST
 * spans are dropped and counted, so memory never grows with an outage. A failed batch goes back to the front of
 * the queue and the next attempt waits longer (up to 30 s), so a short outage loses nothing.
 */

/** Sends one request body (OTLP JSON); resolves when the receiver accepted it, rejects otherwise. */
export type SendBody = (body: string) => Promise<void>;

/** Counters the exporter reports (wired to Prometheus by the caller). */
export interface ExportCounters {
  /** Spans dropped because the queue was full. */
  dropped(count: number): void;
  /** An export request that failed (its spans were queued again). */
  failed(error: Error | undefined): void;
  /** Spans the receiver accepted. */
  exported(count: number): void;
  /** The queue's length after a change, spans. */
  queued(count: number): void;
}

/** Queue bounds and timing. */
export interface BoundedExporterOptions {
  maxSpans: number;
  maxBytes: number;
  batchSize: number;
  /** Delay between sends while spans are queued, ms. */
  flushIntervalMs: number;
  counters: ExportCounters;
}

const MAX_BACKOFF_MS = 30_000;

/** Approximate memory of a queued span: its JSON text plus a fixed overhead, bytes. */
export function spanBytes(span: string): number {
  return 64 + span.length;
}

/** See the module comment. */
export class BoundedBatchExporter {
  private queue: Array<{ span: string; bytes: number }> = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<boolean> | undefined;
  private failures = 0;
  private stopped = false;

  /**
   * @param send posts one request body to the receiver.
   * @param body joins span texts into one request body.
   */
  constructor(
    private readonly send: SendBody,
    private readonly body: (spans: readonly string[]) => string,
    private readonly options: BoundedExporterOptions,
  ) {}

  /** Queues the spans (OTLP JSON texts) and returns at once; the send happens on the timer. Ignored once shut down. */
  export(spans: readonly string[]): void {
    if (this.stopped) return;
    for (const span of spans) {
      const bytes = spanBytes(span);
      this.queue.push({ span, bytes });
      this.bytes += bytes;
    }
    this.trim();
    this.options.counters.queued(this.queue.length);
    this.schedule(this.options.flushIntervalMs);
  }

  /** Sends everything queued; resolves when the queue is empty or a send failed. */
  async forceFlush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queue.length > 0) {
      if (!(await this.sendBatch())) break;
      // Serialising a batch is synchronous work: let waiting requests run between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (this.queue.length > 0) this.schedule(this.backoffMs());
  }

  /** Flushes what it can, then stops. Spans exported afterwards are ignored. */
  async shutdown(): Promise<void> {
    await this.forceFlush();
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Spans waiting to be sent. */
  get size(): number {
    return this.queue.length;
  }

  private trim(): void {
    let dropped = 0;
    while (
      this.queue.length > this.options.maxSpans ||
      (this.bytes > this.options.maxBytes && this.queue.length > 1)
    ) {
      const oldest = this.queue.shift();
      if (oldest === undefined) break;
      this.bytes -= oldest.bytes;
      dropped += 1;
    }
    if (dropped > 0) this.options.counters.dropped(dropped);
  }

  private schedule(delayMs: number): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.forceFlush();
    }, delayMs);
    this.timer.unref();
  }

  private backoffMs(): number {
    return Math.min(MAX_BACKOFF_MS, this.options.flushIntervalMs * 2 ** Math.min(this.failures, 10));
  }

  /** Sends one batch; true when it was accepted. Concurrent callers share the send in flight. */
  private sendBatch(): Promise<boolean> {
    this.sending ??= this.sendOne().finally(() => {
      this.sending = undefined;
    });
    return this.sending;
  }

  private async sendOne(): Promise<boolean> {
    const batch = this.queue.splice(0, this.options.batchSize);
    if (batch.length === 0) return true;
    for (const item of batch) this.bytes -= item.bytes;
    let error: Error | undefined;
    try {
      await this.send(this.body(batch.map((item) => item.span)));
    } catch (caught) {
      error = caught instanceof Error ? caught : new Error(String(caught));
    }
    if (error === undefined) {
      this.failures = 0;
      this.options.counters.exported(batch.length);
      this.options.counters.queued(this.queue.length);
      return true;
    }
    this.failures += 1;
    this.options.counters.failed(error);
    // Back to the front: newer spans queued meanwhile stay behind them; the bounds still hold.
    this.queue.unshift(...batch);
    for (const item of batch) this.bytes += item.bytes;
    this.trim();
    this.options.counters.queued(this.queue.length);
    return false;
  }
}
