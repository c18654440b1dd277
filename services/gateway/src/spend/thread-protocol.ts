/**
 * Messages between the gateway's event loop ({@link SpendWriterThread}) and the spend writer thread
 * (`write-thread.ts`). Values cross by structured clone (the HTML structured clone algorithm that
 * `MessagePort.postMessage` uses), so rows arrive as written, `undefined` fields and all.
 */
import type { SpendLogRow } from "./types.js";

/** What the thread is started with (`workerData`). */
export interface SpendThreadSettings {
  /** The gateway's DATABASE_URL; the thread opens its own one-connection pool on it. */
  databaseUrl: string;
}

/** Main thread → writer thread. */
export type FromMain =
  /** Part of batch `id`, in order (a batch is sent in parts so no single clone blocks the event loop long). */
  | { type: "rows"; id: number; rows: SpendLogRow[] }
  /** Write batch `id` (every part sent before) in one transaction; `now` is clock time, epoch ms. */
  | { type: "write"; id: number; now: number }
  /** End the pool; the thread exits once it is closed. */
  | { type: "close" };

/** Writer thread → main thread. */
export type ToMain =
  /** The thread has loaded and made its pool (sent once, first). */
  | { type: "ready" }
  /** Batch `id` committed; `inserted` log rows were new (the rest were there already). */
  | { type: "written"; id: number; inserted: number }
  /** Batch `id` rolled back: the database error's message and SQLSTATE (or socket) code, when it had one. */
  | { type: "failed"; id: number; message: string; code?: string }
  /** A pool warning for the gateway's log (no row contents). */
  | { type: "log"; fields: object; msg: string };
