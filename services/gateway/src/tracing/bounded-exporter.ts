/**
 * A span exporter with a bounded queue in front of the real one (the OTLP/HTTP exporter). Spans are queued
 * as they end and sent in batches on a timer, off the request path. While the receiver is slow or down the
 * queue holds at most `maxSpans` spans and `maxBytes` of attributes: beyond that the OLDEST spans are
 * dropped and counted, so memory never grows with an outage. A failed batch goes back to the front of the
 * queue and the next attempt waits longer (up to 30 s), so a short outage loses nothing.
 *
 * Contract: OpenTelemetry JS `SpanExporter` (@opentelemetry/sdk-trace-base 2.x): `export(spans, callback)`,
 * `forceFlush()`, `shutdown()`.
 */
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";

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

/** Approximate memory of a span: its string attributes plus a fixed overhead, bytes. */
export function spanBytes(span: ReadableSpan): number {
  let bytes = 256 + span.name.length;
  for (const value of Object.values(span.attributes)) {
    if (typeof value === "string") bytes += value.length;
    else if (Array.isArray(value)) for (const item of value) bytes += String(item).length + 8;
    else bytes += 16;
  }
  return bytes;
}

/** See the module comment. */
export class BoundedBatchExporter implements SpanExporter {
  private queue: Array<{ span: ReadableSpan; bytes: number }> = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<boolean> | undefined;
  private failures = 0;
  private stopped = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly options: BoundedExporterOptions,
  ) {}

  /** Queues the spans and answers success at once; the send happens on the timer. */
  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (this.stopped) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error("trace exporter is shut down") });
      return;
    }
    for (const span of spans) {
      const bytes = spanBytes(span);
      this.queue.push({ span, bytes });
      this.bytes += bytes;
    }
    this.trim();
    this.options.counters.queued(this.queue.length);
    this.schedule(this.options.flushIntervalMs);
    resultCallback({ code: ExportResultCode.SUCCESS });
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

  /** Flushes what it can, then shuts the inner exporter down. Spans exported afterwards are refused. */
  async shutdown(): Promise<void> {
    await this.forceFlush();
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.inner.shutdown();
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
    const result = await new Promise<ExportResult>((resolve) => {
      try {
        this.inner.export(
          batch.map((item) => item.span),
          resolve,
        );
      } catch (error) {
        resolve({ code: ExportResultCode.FAILED, error: error as Error });
      }
    });
    if (result.code === ExportResultCode.SUCCESS) {
      this.failures = 0;
      this.options.counters.exported(batch.length);
      this.options.counters.queued(this.queue.length);
      return true;
    }
    this.failures += 1;
    this.options.counters.failed(result.error);
    // Back to the front: newer spans queued meanwhile stay behind them; the bounds still hold.
    this.queue.unshift(...batch);
    for (const item of batch) this.bytes += item.bytes;
    this.trim();
    this.options.counters.queued(this.queue.length);
    return false;
  }
}
