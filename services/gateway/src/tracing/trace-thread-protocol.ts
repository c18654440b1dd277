/**
 * Messages between the gateway's event loop and the trace thread (`trace-thread.ts`). The loop posts each call's
 * facts once (a few calls per message, small plain data: the content already captured as JSON text); the thread
 * builds the spans, queues and sends them, and reports its counters back.
 */
import type { TraceSettings } from "../config/trace-settings.js";
import type { CallFacts, ToolCallFacts } from "./langfuse-spans.js";

/** The thread's `workerData`. */
export type TraceThreadSettings = Pick<
  TraceSettings,
  | "host"
  | "publicKey"
  | "secretKey"
  | "maxQueueSpans"
  | "maxQueueBytes"
  | "batchSize"
  | "flushIntervalMs"
  | "exportTimeoutMs"
  | "environment"
  | "release"
>;

/** One finished call: a model call or an MCP tool call. */
export type TracedCall = { tool: false; facts: CallFacts } | { tool: true; facts: ToolCallFacts };

/** From the event loop to the thread. */
export type FromLoop =
  | { type: "calls"; calls: TracedCall[] }
  /** Send what is queued; answered with `flushed` of the same id. `stop`: then refuse further calls. */
  | { type: "flush"; id: number; stop: boolean };

/** Counter changes since the last report (spans), and the queue's length now. */
export interface CountsDelta {
  dropped: number;
  exported: number;
  failures: number;
  queued: number;
  /** The last failure's message, if any failed. */
  error?: string;
}

/** From the thread to the event loop. */
export type ToLoop =
  /** Calls taken off the message queue (the loop bounds calls posted but not yet taken). */
  | { type: "taken"; calls: number }
  | ({ type: "counts" } & CountsDelta)
  /** A flush ended; `left`: spans still queued. */
  | { type: "flushed"; id: number; left: number };
