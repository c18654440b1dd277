/**
 * Trace export on a worker thread (`trace-thread.ts`): the event loop only captures a call's content (one JSON
 * serialisation, `factsOf`) and posts the call's facts, a few calls per message (those of one event-loop turn);
 * building the OTLP JSON, queueing, batching and the HTTP posts happen in the thread. Bounds: the thread's queue
 * has the in-process one's (`bounded-exporter.ts`); calls waiting on the loop or posted but not yet taken by the
 * thread are at most `maxQueueSpans` (the oldest waiting are dropped and counted), so a stalled thread cannot grow
 * memory without bound either (each call's text is at most 2 × `maxContentChars`).
 * A thread that dies is started again on the next call (its queued spans are lost).
 */
import { Worker } from "node:worker_threads";
import type { FastifyBaseLogger } from "fastify";
import { workerScript } from "../threads/worker-script.js";
import type { ExportCounters } from "./bounded-exporter.js";
import type { FromLoop, ToLoop, TracedCall, TraceThreadSettings } from "./trace-thread-protocol.js";

/** The event loop's end of the trace thread; see the module comment. */
export class TraceThread {
  private worker: Worker | null = null;
  private buffer: TracedCall[] = [];
  private scheduled = false;
  /** Calls posted and not yet taken by the thread. */
  private inFlight = 0;
  private readonly flushes = new Map<number, (left: number) => void>();
  private nextId = 1;

  constructor(
    private readonly settings: TraceThreadSettings,
    private readonly counters: ExportCounters,
    private readonly log: FastifyBaseLogger,
  ) {}

  /**
   * Queues a call's facts for the thread; returns at once. Beyond the bound the oldest calls not yet posted are
   * dropped (and their spans counted), as the thread's queue drops its oldest spans.
   */
  add(call: TracedCall): void {
    this.buffer.push(call);
    while (this.inFlight + this.buffer.length > this.settings.maxQueueSpans && this.buffer.length > 0) {
      const oldest = this.buffer.shift();
      if (oldest) this.counters.dropped(oldest.facts.guardrails.length + 2);
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.post());
    }
  }

  /** Sends what is queued; resolves with the spans still queued in the thread after the attempt. */
  flush(stop = false): Promise<number> {
    this.post();
    const worker = this.worker;
    if (worker === null) return Promise.resolve(0);
    const id = this.nextId++;
    return new Promise<number>((resolve) => {
      this.flushes.set(id, resolve);
      this.send(worker, { type: "flush", id, stop });
    });
  }

  /** Flushes for at most `timeoutMs`, then ends the thread; resolves with the spans left unsent (undefined: unknown, timed out). */
  async shutdown(timeoutMs: number): Promise<number | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), timeoutMs);
    });
    const left = await Promise.race([this.flush(true), timedOut]);
    clearTimeout(timer);
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
    return left;
  }

  private post(): void {
    this.scheduled = false;
    if (this.buffer.length === 0) return;
    const calls = this.buffer;
    this.buffer = [];
    this.inFlight += calls.length;
    this.send(this.started(), { type: "calls", calls });
  }

  private send(worker: Worker, message: FromLoop): void {
    worker.postMessage(message);
  }

  private started(): Worker {
    if (this.worker !== null) return this.worker;
    const { script, eval: isEval } = workerScript(import.meta.url, "trace-thread");
    const worker = new Worker(script, { workerData: this.settings, eval: isEval });
    worker.unref();
    worker.on("message", (message: ToLoop) => this.answer(message));
    worker.on("error", (error) => {
      this.log.error({ err: error.message }, "trace thread failed; its queued spans are lost");
      this.stopped(worker);
    });
    worker.on("exit", () => this.stopped(worker));
    this.worker = worker;
    return worker;
  }

  private answer(message: ToLoop): void {
    if (message.type === "taken") {
      this.inFlight = Math.max(0, this.inFlight - message.calls);
    } else if (message.type === "counts") {
      if (message.dropped > 0) this.counters.dropped(message.dropped);
      if (message.exported > 0) this.counters.exported(message.exported);
      for (let i = 0; i < message.failures; i++) this.counters.failed(new Error(message.error));
      this.counters.queued(message.queued);
    } else {
      this.flushes.get(message.id)?.(message.left);
      this.flushes.delete(message.id);
    }
  }

  /** The thread is gone: flushes waiting on it end; the next call starts a new thread. */
  private stopped(worker: Worker): void {
    if (this.worker === worker) this.worker = null;
    this.inFlight = 0;
    for (const resolve of this.flushes.values()) resolve(0);
    this.flushes.clear();
  }
}
