/**
 * The cluster primary (GATEWAY_WORKERS > 1): forks that many gateway workers, each a whole gateway listening on
 * the same port (node:cluster hands connections out round-robin), and looks after them:
 * - start-up: a worker that fails before it listens (bad config, unreachable database) makes the primary print
 *   that worker's one message and exit 1, instead of restarting it in a loop;
 * - a worker that dies later is replaced in the same slot after a backoff (100 ms, doubling per quick death,
 *   at most 30 s), logged with its exit code or signal;
 * - SIGTERM or SIGINT: every worker is told to shut down gracefully (finish in-flight calls within
 *   GATEWAY_SHUTDOWN_TIMEOUT_MS, flush spend); the primary exits once all have, 0 when all exited 0; a second
 *   signal kills the workers and exits 1 at once;
 * - GET /metrics: a worker asks, the primary collects every worker's registry and answers with the sum
 *   (`cluster-metrics.ts`).
 * The primary itself serves nothing and opens no database or Redis connection.
 */
import cluster, { type Worker } from "node:cluster";
import type { Logger } from "pino";
import type { GatewayEnv } from "../config/env.js";
import { ClusterMetrics } from "./cluster-metrics.js";
import { type FromPrimary, type FromWorker, isGatewayMessage } from "./messages.js";

/** A worker that lived at least this long before dying is restarted without a grown backoff, ms. */
const STABLE_AFTER_MS = 30_000;
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 30_000;
/** How long a metrics collection waits for the slowest worker, ms. */
const METRICS_TIMEOUT_MS = 4000;

interface Slot {
  worker: Worker | undefined;
  ready: boolean;
  startedAt: number;
  /** Deaths in a row, each within {@link STABLE_AFTER_MS} of its start. */
  quickDeaths: number;
  restart: NodeJS.Timeout | undefined;
}

/**
 * Runs the primary until every worker has stopped; never resolves (it ends the process).
 * @param env the validated environment (`env.workers` > 1); workers read the same environment again.
 * @param log the primary's logger (stdout); start-up failures go to stderr as `gateway: cannot start: …`.
 */
export function runPrimary(env: GatewayEnv, log: Logger): void {
  const slots: Slot[] = Array.from({ length: env.workers }, () => ({
    worker: undefined,
    ready: false,
    startedAt: 0,
    quickDeaths: 0,
    restart: undefined,
  }));
  const metrics = new ClusterMetrics(METRICS_TIMEOUT_MS);
  let startingUp = true;
  let stopping = false;
  let failed = false;
  let exitCode = 0;

  const liveWorkers = () => slots.flatMap((s) => (s.worker && s.ready ? [s.worker] : []));
  const send = (worker: Worker, message: FromPrimary) => {
    if (worker.isConnected()) worker.send(message);
  };

  const failStartUp = (message: string) => {
    if (failed) return;
    failed = true;
    process.stderr.write(`gateway: cannot start: ${message}\n`);
    for (const slot of slots) slot.worker?.process.kill("SIGKILL");
    process.exit(1);
  };

  const stopIfDone = () => {
    if (!stopping || slots.some((s) => s.worker !== undefined)) return;
    log.info("shutdown complete");
    process.exit(exitCode);
  };

  const fork = (index: number) => {
    const slot = slots[index] as Slot;
    slot.restart = undefined;
    const worker = cluster.fork({ GATEWAY_WORKER_SLOT: String(index) });
    slot.worker = worker;
    slot.ready = false;
    slot.startedAt = Date.now();
    worker.on("message", (message: unknown) => {
      if (!isGatewayMessage<FromWorker>(message)) return;
      switch (message.type) {
        case "gateway:ready":
          slot.ready = true;
          if (startingUp && slots.every((s) => s.ready)) {
            startingUp = false;
            log.info({ workers: env.workers, port: env.port }, "gateway workers listening");
          }
          break;
        case "gateway:start-failed":
          if (startingUp) failStartUp(message.message);
          else log.error({ worker: index, reason: message.message }, "replacement worker could not start");
          break;
        case "gateway:metrics-request":
          metrics.collect(liveWorkers()).then(
            (text) => send(worker, { type: "gateway:metrics-result", id: message.id, text }),
            (error: Error) =>
              send(worker, { type: "gateway:metrics-result", id: message.id, error: error.message }),
          );
          break;
        case "gateway:metrics-part":
          metrics.received(worker, message.id, message.metrics);
          break;
      }
    });
    worker.on("exit", (code, signal) => {
      metrics.gone(worker);
      const wasReady = slot.ready;
      slot.worker = undefined;
      slot.ready = false;
      if (stopping) {
        if (code !== 0) exitCode = 1;
        log.info({ worker: index, pid: worker.process.pid, code, signal }, "gateway worker stopped");
        stopIfDone();
        return;
      }
      if (startingUp && !wasReady) {
        failStartUp(`gateway worker ${index} exited during start-up (code ${code}, signal ${signal})`);
        return;
      }
      slot.quickDeaths = Date.now() - slot.startedAt < STABLE_AFTER_MS ? slot.quickDeaths + 1 : 0;
      const delayMs = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, slot.quickDeaths - 1));
      log.error(
        { worker: index, pid: worker.process.pid, code, signal, restartInMs: delayMs },
        "gateway worker exited unexpectedly; starting a replacement",
      );
      slot.restart = setTimeout(() => fork(index), delayMs);
    });
  };

  let signals = 0;
  const stop = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      log.warn({ signal }, "second signal: killing the workers and exiting now");
      for (const slot of slots) slot.worker?.process.kill("SIGKILL");
      process.exit(1);
    }
    stopping = true;
    log.info(
      { signal, timeoutMs: env.shutdownTimeoutMs, workers: env.workers },
      "shutting down: every worker finishes its in-flight requests",
    );
    for (const slot of slots) {
      clearTimeout(slot.restart);
      if (slot.worker) send(slot.worker, { type: "gateway:shutdown" });
    }
    stopIfDone();
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));

  if (env.redisUrl === undefined) {
    log.warn(
      { workers: env.workers },
      "REDIS_URL is not set: rate limits and budgets are kept per worker process, so each of the workers admits up to the full limits; set REDIS_URL to share them",
    );
  }
  for (let index = 0; index < env.workers; index++) fork(index);
}
