/**
 * The primary's side of GET /metrics with several workers: asks every listening worker for its registry
 * (`Registry.getMetricsAsJSON()` over IPC) and merges them with prom-client's `AggregatorRegistry.aggregate`,
 * each metric by the `aggregator` its definition names: counters and histograms summed (the default), gauges
 * as chosen where they are defined (e.g. `gateway_limits_shared` min, `litellm_deployment_state` max).
 * Metric names and labels stay those of one gateway: no worker label is added.
 */
import type { Worker } from "node:cluster";
import { AggregatorRegistry } from "prom-client";
import type { FromPrimary, MetricsJson } from "./messages.js";

/** prom-client omits `process_start_time_seconds` when aggregating; the earliest worker start is kept instead. */
const AGGREGATOR_OVERRIDES: Readonly<Record<string, "min">> = { process_start_time_seconds: "min" };

interface Collection {
  parts: MetricsJson[];
  waiting: Set<number>;
  finish: () => void;
}

/** Collects and merges the workers' registries; one instance per primary. */
export class ClusterMetrics {
  private nextId = 0;
  private readonly collections = new Map<number, Collection>();

  /** @param timeoutMs how long a collection waits for the slowest worker before it fails. */
  constructor(private readonly timeoutMs: number) {}

  /**
   * The Prometheus text exposition of all `workers` together.
   * @throws Error when a worker has not answered within the timeout (a partial sum would look like a
   *   counter reset to Prometheus, so none is returned).
   */
  collect(workers: readonly Worker[]): Promise<string> {
    const id = this.nextId++;
    const live = workers.filter((w) => w.isConnected());
    const parts: MetricsJson[] = [];
    const gathered = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.collections.delete(id);
        reject(new Error(`a worker did not send its metrics within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.collections.delete(id);
        resolve();
      };
      this.collections.set(id, { parts, waiting: new Set(live.map((w) => w.id)), finish });
    });
    const message: FromPrimary = { type: "gateway:metrics-collect", id };
    for (const worker of live) worker.send(message);
    if (live.length === 0) this.collections.get(id)?.finish();
    return gathered.then(() => merge(parts));
  }

  /** A worker's answer to collection `id`. */
  received(worker: Worker, id: number, metrics: MetricsJson): void {
    const collection = this.collections.get(id);
    if (collection === undefined || !collection.waiting.delete(worker.id)) return;
    collection.parts.push(metrics);
    if (collection.waiting.size === 0) collection.finish();
  }

  /** A worker exited: collections under way stop waiting for it (its share is no longer part of the gateway). */
  gone(worker: Worker): void {
    for (const collection of this.collections.values()) {
      if (collection.waiting.delete(worker.id) && collection.waiting.size === 0) collection.finish();
    }
  }
}

/** Merges workers' registries into one exposition text. */
export async function merge(parts: readonly MetricsJson[]): Promise<string> {
  const adjusted = parts.map((metrics) =>
    metrics.map((metric) => {
      const override = AGGREGATOR_OVERRIDES[metric.name];
      return override === undefined ? metric : { ...metric, aggregator: override };
    }),
  );
  return AggregatorRegistry.aggregate(adjusted).metrics();
}
