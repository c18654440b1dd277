/**
 * The {@link SpendRecorder} over Postgres: `record()` only appends to an in-memory queue; a timer writes the
 * queue in batches (every `flushIntervalMs`, or at once when `batchSize` rows are waiting), each batch in one
 * transaction (see {@link writeSpendBatch}), written on the event loop or, given `write`, by a
 * {@link SpendWriterThread} (`thread-writer.ts`): then a writer thread that dies is an outage like any other.
 *
 * Postgres outage: a failed batch stays at the head of the queue and is retried with exponential backoff
 * (1 s doubling to 30 s); rows are never dropped while the queue holds fewer than `maxBufferedRows`
 * (default 100 000, roughly 50 MB). Past that bound new rows are dropped, counted in
 * `litellm_spend_rows_dropped_total` and logged once per outage: the gateway keeps serving, budgets are still
 * enforced by the limits in Redis, only those log rows and their spend increments are lost.
 *
 * Durability: with a {@link SpendSpool}, every queued row is also appended to the spool, in one fsync'd batch
 * every `spoolIntervalMs` (default 50 ms), whether Postgres is healthy or not, and
 * {@link BatchingSpendRecorder.close} spools whatever is left; so rows survive SIGTERM, a SIGKILL and a
 * restart (they are replayed at start). Only the rows recorded within the last `spoolIntervalMs` plus one
 * fsync (under 100 ms on a healthy disk) are in memory alone when the process dies. The queue's spooled rows
 * are always a prefix of it (rows are spooled in order and written from the head); a segment file is deleted
 * once all its rows are written, so in a healthy period a segment lives about one `flushIntervalMs`.
 */
import type { FastifyBaseLogger } from "fastify";
import type pg from "pg";
import { Counter, Gauge, type Registry } from "prom-client";
import { isDataError } from "../db/errors.js";
import type { Clock } from "../time/clock.js";
import type { SpendSpool, SpooledSegment } from "./spool.js";
import type { SpendWriterThread } from "./thread-writer.js";
import type { SpendLogRow, SpendRecorder } from "./types.js";
import { writeSpendBatch } from "./write.js";

export interface SpendRecorderOptions {
  pool: pg.Pool;
  /** Business time, for budget period rollover. */
  clock: Clock;
  log: FastifyBaseLogger;
  registry: Registry;
  /** Write interval, ms. Default 1000. */
  flushIntervalMs?: number;
  /** Rows per transaction; reaching it triggers a write at once. Default 500. */
  batchSize?: number;
  /** Queue bound, rows. Default 100 000. */
  maxBufferedRows?: number;
  /** First retry delay after a failed write, ms (doubles up to `maxBackoffMs`). Default 1000. */
  initialBackoffMs?: number;
  /** Default 30 000. */
  maxBackoffMs?: number;
  /** Local durable copy of rows Postgres has not taken; without it they live in memory only. */
  spool?: SpendSpool;
  /** How often new rows are appended to the spool and fsync'd, ms. Default 50 (at most ~100 ms at risk). */
  spoolIntervalMs?: number;
  /**
   * Writes one batch with {@link writeSpendBatch}'s contract (one transaction, idempotent by `request_id`,
   * resolves to the new log rows, rejects with the database error). Default: `writeSpendBatch` on `pool`, on
   * the event loop; the store passes a {@link SpendWriterThread}'s `write` to take it off the loop.
   */
  write?: (rows: SpendLogRow[], now: number) => Promise<number>;
}

/** What {@link BatchingSpendRecorder.close} left for the next start. */
export interface SpendHandover {
  /** Rows not written to Postgres. */
  pending: number;
  /** Those rows are in the spool's folder ({@link SpendHandover.dir}); false: they are lost. */
  spooled: boolean;
  /** The spool folder, when there is a spool. */
  dir: string | undefined;
}

/** Rows per segment file before the recorder starts a new one. */
const SEGMENT_ROWS = 10_000;

interface Segment {
  file: string;
  /** Rows appended to it. */
  rows: number;
  /** Of those, rows not written to Postgres yet. */
  remaining: number;
}

/** Metrics of the recorder, get-or-create on a registry (several stores may share one in a process). */
function recorderMetrics(registry: Registry) {
  const existing = <T>(name: string) => registry.getSingleMetric(name) as T | undefined;
  return {
    buffered:
      existing<Gauge>("litellm_spend_buffer_rows") ??
      new Gauge({
        name: "litellm_spend_buffer_rows",
        aggregator: "sum", // several workers: the rows/spans queued in all of them
        help: "Spend log rows queued in memory, not yet written to Postgres",
        registers: [registry],
      }),
    failures:
      existing<Counter>("litellm_spend_flush_failures_total") ??
      new Counter({
        name: "litellm_spend_flush_failures_total",
        help: "Failed attempts to write a batch of spend rows to Postgres (the batch is retried)",
        registers: [registry],
      }),
    dropped:
      existing<Counter>("litellm_spend_rows_dropped_total") ??
      new Counter({
        name: "litellm_spend_rows_dropped_total",
        help: "Spend log rows dropped because the in-memory queue was full (Postgres unreachable for long)",
        registers: [registry],
      }),
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Batching, retrying spend writer; see the module comment. */
export class BatchingSpendRecorder implements SpendRecorder {
  private readonly queue: SpendLogRow[] = [];
  private writing: Promise<boolean> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private spoolTimer: NodeJS.Timeout | null = null;
  /** A spool append is in flight (the next waits for it, so appends never pile up behind a slow disk). */
  private spooling = false;
  private failuresInRow = 0;
  private retryAt = 0;
  private droppedSinceLog = 0;
  /** Rows at the head of the queue to write one at a time (after a batch was refused for its data). */
  private isolating = 0;
  /** How many rows at the head of the queue are in the spool. */
  private spooled = 0;
  /** Spool segments holding the first {@link spooled} queue rows, in queue order. */
  private readonly segments: Segment[] = [];
  private spoolFailed = false;
  private readonly metrics: ReturnType<typeof recorderMetrics>;
  private readonly batchSize: number;
  private readonly maxBufferedRows: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly write: (rows: SpendLogRow[], now: number) => Promise<number>;

  constructor(private readonly options: SpendRecorderOptions) {
    this.write = options.write ?? ((rows, now) => writeSpendBatch(options.pool, rows, now));
    this.metrics = recorderMetrics(options.registry);
    this.batchSize = options.batchSize ?? 500;
    this.maxBufferedRows = options.maxBufferedRows ?? 100_000;
    this.initialBackoffMs = options.initialBackoffMs ?? 1000;
    this.maxBackoffMs = options.maxBackoffMs ?? 30_000;
  }

  /** Starts the periodic writer (the timer does not keep the process alive). */
  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => void this.tick(), this.options.flushIntervalMs ?? 1000);
    this.timer.unref();
    if (this.options.spool === undefined) return;
    this.spoolTimer = setInterval(() => void this.spoolTick(), this.options.spoolIntervalMs ?? 50);
    this.spoolTimer.unref();
  }

  /** Stops the periodic writer and spooler; queued rows stay queued (call {@link flush} first). */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    if (this.spoolTimer !== null) clearInterval(this.spoolTimer);
    this.timer = null;
    this.spoolTimer = null;
  }

  /** Appends the rows recorded since the last append to the spool (one fsync'd batch), one append at a time. */
  private async spoolTick(): Promise<void> {
    if (this.spooling || this.spooled >= this.queue.length || this.spoolFailed) return;
    this.spooling = true;
    try {
      await this.spoolPending();
    } finally {
      this.spooling = false;
    }
  }

  /** Rows queued and not yet written. */
  get pending(): number {
    return this.queue.length;
  }

  /**
   * Queues rows read back from the spool (at start, before any {@link record}); each segment file is deleted
   * once its rows are written.
   */
  loadSpooled(segments: SpooledSegment[]): void {
    const spool = this.options.spool;
    if (spool === undefined) return;
    for (const segment of segments) {
      if (segment.rows.length === 0) {
        void spool.release(segment.file);
        continue;
      }
      this.queue.push(...segment.rows);
      this.spooled = this.queue.length;
      this.segments.push({ file: segment.file, rows: SEGMENT_ROWS, remaining: segment.rows.length });
    }
    this.metrics.buffered.set(this.queue.length);
  }

  /**
   * Appends every queued row not yet in the spool to it (one batch, fsync'd).
   * @returns false when there is no spool or the file system refused the write (logged).
   */
  async spoolPending(): Promise<boolean> {
    const spool = this.options.spool;
    if (spool === undefined) return false;
    const rows = this.queue.slice(this.spooled);
    this.spooled = this.queue.length;
    const appends: Promise<void>[] = [];
    for (let offset = 0; offset < rows.length; ) {
      let segment = this.segments.at(-1);
      if (segment === undefined || segment.rows >= SEGMENT_ROWS) {
        segment = { file: spool.newSegment(), rows: 0, remaining: 0 };
        this.segments.push(segment);
      }
      const part = rows.slice(offset, offset + SEGMENT_ROWS - segment.rows);
      segment.rows += part.length;
      segment.remaining += part.length;
      offset += part.length;
      appends.push(spool.append(segment.file, part));
    }
    try {
      await Promise.all(appends);
      await spool.settled();
      return !this.spoolFailed;
    } catch (error) {
      this.spoolFailed = true;
      this.options.log.error(
        { dir: spool.dir, err: error instanceof Error ? error.message : String(error) },
        "spend spool: cannot write to disk; queued spend rows are in memory only",
      );
      return false;
    }
  }

  /**
   * Shutdown: stops the timer and hands every row over, to Postgres or to the spool. While Postgres is failing
   * the rows are spooled first and one more write is tried for at most 1 s; otherwise writing is tried for up to
   * `timeoutMs` and what is left is spooled. Never throws.
   */
  async close(timeoutMs = 5000): Promise<SpendHandover> {
    this.stop();
    const dir = this.options.spool?.dir;
    let spooled = true;
    if (this.failuresInRow > 0) {
      spooled = await this.spoolPending();
      await this.flush(Math.min(timeoutMs, 1000));
    } else {
      await this.flush(timeoutMs);
      if (this.queue.length > 0) spooled = await this.spoolPending();
    }
    await this.options.spool?.settled();
    return { pending: this.queue.length, spooled: spooled && this.options.spool !== undefined, dir };
  }

  /** Queues one row; never throws, never waits. */
  record(row: SpendLogRow): void {
    if (this.queue.length >= this.maxBufferedRows) {
      this.metrics.dropped.inc();
      if (this.droppedSinceLog === 0) {
        this.options.log.error(
          { maxBufferedRows: this.maxBufferedRows },
          "spend queue full (Postgres unreachable for long): dropping new spend rows until it drains",
        );
      }
      this.droppedSinceLog += 1;
      return;
    }
    this.queue.push(row);
    this.metrics.buffered.set(this.queue.length);
    if (this.queue.length >= this.batchSize && this.writing === null) setImmediate(() => void this.tick());
  }

  /**
   * Writes everything queued, retrying failed batches with backoff until `timeoutMs` (default 5000) has
   * passed; rows not written by then stay queued. Never throws.
   */
  async flush(timeoutMs = 5000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.queue.length > 0 && performance.now() < deadline) {
      if (this.writing !== null) {
        await Promise.race([this.writing, sleep(Math.max(0, deadline - performance.now()))]);
        continue;
      }
      const wait = this.retryAt - performance.now();
      if (wait > 0) {
        await sleep(Math.min(wait, Math.max(0, deadline - performance.now())));
        continue;
      }
      await this.writeOne();
    }
  }

  private async tick(): Promise<void> {
    if (this.writing !== null || performance.now() < this.retryAt) return;
    while (this.queue.length > 0 && performance.now() >= this.retryAt) {
      if (!(await this.writeOne())) return;
    }
  }

  /** Writes the head batch; single-flight. Resolves true on success. */
  private writeOne(): Promise<boolean> {
    if (this.writing !== null) return this.writing;
    const batch = this.queue.slice(0, this.isolating > 0 ? 1 : this.batchSize);
    this.writing = this.write(batch, this.options.clock.now())
      .then(() => {
        this.removeHead(batch.length);
        if (this.failuresInRow > 0) {
          this.options.log.info(
            { failedAttempts: this.failuresInRow, dropped: this.droppedSinceLog, queued: this.queue.length },
            "spend writes to Postgres resumed",
          );
        }
        this.failuresInRow = 0;
        this.droppedSinceLog = 0;
        this.retryAt = 0;
        return true;
      })
      .catch((error: unknown) => {
        if (isDataError(error)) return this.isolate(batch, error);
        this.failuresInRow += 1;
        this.metrics.failures.inc();
        const backoff = Math.min(this.initialBackoffMs * 2 ** (this.failuresInRow - 1), this.maxBackoffMs);
        this.retryAt = performance.now() + backoff;
        const log = this.failuresInRow === 1 ? this.options.log.warn : this.options.log.debug;
        log.call(
          this.options.log,
          {
            err: error instanceof Error ? error.message : String(error),
            queued: this.queue.length,
            retryInMs: backoff,
          },
          "spend write to Postgres failed; rows kept and retried",
        );
        void this.spoolPending();
        return false;
      })
      .finally(() => {
        this.writing = null;
      });
    return this.writing;
  }

  /** Only this writer removes from the head; record() appends at the tail. */
  private removeHead(count: number): void {
    this.queue.splice(0, count);
    this.metrics.buffered.set(this.queue.length);
    if (this.isolating > 0) this.isolating = Math.max(0, this.isolating - count);
    let written = Math.min(count, this.spooled);
    this.spooled -= written;
    while (written > 0) {
      const segment = this.segments[0];
      if (segment === undefined) break;
      const done = Math.min(written, segment.remaining);
      segment.remaining -= done;
      written -= done;
      if (segment.remaining === 0) {
        this.segments.shift();
        void this.options.spool?.release(segment.file);
      }
    }
  }

  /**
   * A batch the database refuses for its data (not an outage) would block the queue forever: write its rows
   * one by one, and drop (and log by request id) a single row the database refuses.
   */
  private isolate(batch: SpendLogRow[], error: unknown): boolean {
    const row = batch[0];
    if (batch.length === 1 && row !== undefined) {
      this.metrics.dropped.inc();
      this.options.log.error(
        { requestId: row.requestId, err: error instanceof Error ? error.message : String(error) },
        "spend row refused by Postgres; dropped",
      );
      this.removeHead(1);
      return true;
    }
    this.isolating = batch.length;
    return true;
  }
}
