/**
 * Spend batches written by a worker thread (`node:worker_threads`, entry `write-thread.ts`) instead of on the
 * gateway's event loop: a 500-row batch's statement parameters, node-postgres's serialising and the answers'
 * parsing block the loop 2–3 ms (bench/RESULTS.md); here the loop only clones the rows into the thread, in
 * parts of {@link PART_ROWS} with a turn of the event loop between them.
 *
 * Guarantees are the recorder's (`recorder.ts`), unchanged: a batch is one transaction in the thread, idempotent
 * by `request_id`; a write the thread does not answer because it died (an uncaught error, out of memory, a
 * `terminate()`) rejects like a lost connection, so the recorder keeps the rows, spools them and retries them
 * on a new thread; a database error comes back with its SQLSTATE, so rows the database refuses are still
 * isolated and dropped one by one.
 *
 * The thread opens one more connection to DATABASE_URL. Not for the embedded database (PGlite serves one
 * session: a second connection would interleave its messages with the pool's), where the recorder writes on
 * the event loop as before.
 */
import { setImmediate as turn } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import type { FastifyBaseLogger } from "fastify";
import { workerScript } from "../threads/worker-script.js";
import type { FromMain, SpendThreadSettings, ToMain } from "./thread-protocol.js";
import type { SpendLogRow } from "./types.js";

/** Rows per message: cloning 500 rows at once takes 1–1.5 ms of the event loop, 50 about a tenth of that. */
export const PART_ROWS = 50;

/** The error a write rejects with when the thread ended before answering (no SQLSTATE: an outage, retried). */
export class SpendThreadStoppedError extends Error {
  override name = "SpendThreadStoppedError";
}

interface Pending {
  resolve(inserted: number): void;
  reject(error: Error): void;
}

/** One spend writer thread, started on the first write and again after it died; see the module comment. */
export class SpendWriterThread {
  private worker: Worker | null = null;
  /** Resolves once the current thread has sent `ready` (or has stopped). */
  private ready: Promise<void> = Promise.resolve();
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  /**
   * @param databaseUrl the gateway's DATABASE_URL (a server, not the embedded database).
   * @param log receives the thread's pool warnings and its exits (no row contents).
   */
  constructor(
    private readonly databaseUrl: string,
    private readonly log: FastifyBaseLogger,
  ) {}

  /**
   * Writes `rows` in one transaction in the thread ({@link writeSpendBatch}'s contract).
   * @param now clock time, epoch ms (budget period rollover).
   * @returns how many log rows were new.
   * @throws an Error with the database's `code` (SQLSTATE) when it refused or failed the batch (rolled back);
   *   {@link SpendThreadStoppedError} when the thread ended before answering (the batch may or may not be
   *   committed: a retry is idempotent).
   */
  async write(rows: SpendLogRow[], now: number): Promise<number> {
    const worker = this.started();
    const id = this.nextId++;
    const answer = new Promise<number>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    worker.ref();
    for (let offset = 0; offset < rows.length; offset += PART_ROWS) {
      if (offset > 0) await turn();
      if (this.worker !== worker) break; // died meanwhile: the answer is already rejected
      this.post(worker, { type: "rows", id, rows: rows.slice(offset, offset + PART_ROWS) });
    }
    if (this.worker === worker) this.post(worker, { type: "write", id, now });
    return answer;
  }

  /**
   * Starts the thread (if not running) and resolves once it has loaded, so the first batch does not wait for
   * it (under tsx it compiles its modules first). Never rejects: a thread that fails to start is logged, and
   * the next write starts another.
   */
  start(): Promise<void> {
    this.started();
    return this.ready;
  }

  /** Ends the thread now; writes in flight reject with {@link SpendThreadStoppedError}. The next write starts a new one. */
  async terminate(): Promise<void> {
    const worker = this.worker;
    if (worker === null) return;
    this.stopped(worker, "terminated");
    await worker.terminate();
  }

  /**
   * Closes the thread's pool and waits (at most `timeoutMs`, default 2000) for the thread to exit, then ends it.
   * Call after the recorder's last flush; writes still in flight reject.
   */
  async close(timeoutMs = 2000): Promise<void> {
    const worker = this.worker;
    if (worker === null) return;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    this.post(worker, { type: "close" });
    const timer = setTimeout(() => void worker.terminate(), timeoutMs);
    await exited;
    clearTimeout(timer);
  }

  private started(): Worker {
    if (this.worker !== null) return this.worker;
    const { script, eval: isEval } = workerScript(import.meta.url, "write-thread");
    const settings: SpendThreadSettings = { databaseUrl: this.databaseUrl };
    const worker = new Worker(script, { workerData: settings, eval: isEval });
    worker.unref();
    let loaded: () => void = () => undefined;
    this.ready = new Promise<void>((resolve) => {
      loaded = resolve;
    });
    worker.on("message", (message: ToMain) => {
      if (message.type === "ready") loaded();
      else this.answer(message);
    });
    worker.on("error", (error) => {
      this.log.error(
        { err: error.message },
        "spend writer thread failed; queued spend rows are kept and retried",
      );
      this.stopped(worker, error.message);
      loaded();
    });
    worker.on("exit", (code) => {
      if (this.worker === worker && code !== 0) {
        this.log.warn({ code }, "spend writer thread exited; queued spend rows are kept and retried");
      }
      this.stopped(worker, `exit code ${code}`);
      loaded();
    });
    this.worker = worker;
    return worker;
  }

  private post(worker: Worker, message: FromMain): void {
    worker.postMessage(message);
  }

  private answer(message: Exclude<ToMain, { type: "ready" }>): void {
    if (message.type === "log") {
      this.log.warn(message.fields, message.msg);
      return;
    }
    const pending = this.pending.get(message.id);
    if (pending === undefined) return;
    this.pending.delete(message.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (message.type === "written") {
      pending.resolve(message.inserted);
      return;
    }
    pending.reject(
      Object.assign(new Error(message.message), message.code === undefined ? {} : { code: message.code }),
    );
  }

  /** The thread is gone: every unanswered write rejects; the next write starts a new thread. */
  private stopped(worker: Worker, why: string): void {
    if (this.worker !== worker) return;
    this.worker = null;
    for (const pending of this.pending.values()) {
      pending.reject(new SpendThreadStoppedError(`spend writer thread stopped before answering (${why})`));
    }
    this.pending.clear();
  }
}
