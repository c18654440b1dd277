/**
 * A gateway worker's side of the cluster (GATEWAY_WORKERS > 1): tells the primary when it listens or why it
 * could not start, takes its shutdown order, answers the primary's collection of metrics, and asks the primary
 * for the whole gateway's metrics when a client scrapes this worker's GET /metrics.
 */
import cluster from "node:cluster";
import type { Registry } from "prom-client";
import { type FromPrimary, type FromWorker, isGatewayMessage } from "./messages.js";

/** How long GET /metrics waits for the primary's aggregated answer, ms. */
const METRICS_WAIT_MS = 5000;

/** The IPC channel to the primary; see the module comment. */
export interface WorkerLink {
  /** The worker's slot (0 … GATEWAY_WORKERS − 1), kept by its replacements; a log field. */
  readonly slot: number;
  /** Announces that the worker listens. */
  ready(): void;
  /** Reports a start-up failure (`message`: one line, no secret) and resolves once it is sent. */
  startFailed(message: string): Promise<void>;
  /** Calls `handler` when the primary orders a graceful shutdown (at once if it already did). */
  onShutdown(handler: () => void): void;
  /** Answers the primary's metric collections with `registry`. */
  serveMetrics(registry: Registry): void;
  /**
   * The whole gateway's Prometheus text, from the primary.
   * @throws Error when the primary does not answer within 5 s or could not collect every worker.
   */
  clusterMetrics(): Promise<string>;
}

/** The link of this process, or undefined when it is not a cluster worker (GATEWAY_WORKERS = 1). */
export function workerLink(): WorkerLink | undefined {
  if (!cluster.isWorker || process.send === undefined) return undefined;
  const send = (message: FromWorker, callback?: () => void) => {
    if (process.connected) process.send?.(message, undefined, undefined, callback);
    else callback?.();
  };
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  let registry: Registry | undefined;
  let shutdown: (() => void) | undefined;
  let shutdownOrdered = false;

  process.on("message", (message: unknown) => {
    if (!isGatewayMessage<FromPrimary>(message)) return;
    if (message.type === "gateway:shutdown") {
      shutdownOrdered = true;
      shutdown?.();
    } else if (message.type === "gateway:metrics-collect") {
      const own = registry;
      if (own === undefined) return;
      void own
        .getMetricsAsJSON()
        .then((metrics) => send({ type: "gateway:metrics-part", id: message.id, metrics }));
    } else if (message.type === "gateway:metrics-result") {
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.text !== undefined) waiter?.resolve(message.text);
      else waiter?.reject(new Error(message.error ?? "no metrics"));
    }
  });

  return {
    slot: Number(process.env.GATEWAY_WORKER_SLOT ?? cluster.worker?.id ?? 0),
    ready: () => send({ type: "gateway:ready" }),
    startFailed: (message) =>
      new Promise((resolve) => send({ type: "gateway:start-failed", message }, resolve)),
    onShutdown(handler) {
      shutdown = handler;
      if (shutdownOrdered) handler();
    },
    serveMetrics(own) {
      registry = own;
    },
    clusterMetrics() {
      const id = nextId++;
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`the cluster primary did not answer within ${METRICS_WAIT_MS} ms`));
        }, METRICS_WAIT_MS);
        pending.set(id, {
          resolve: (text) => {
            clearTimeout(timer);
            resolve(text);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
        send({ type: "gateway:metrics-request", id });
      });
    },
  };
}
