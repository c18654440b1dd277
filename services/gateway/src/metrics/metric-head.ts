/**
 * What every compact metric (`compact-counter.ts`, `compact-gauge.ts`, `compact-histogram.ts`) is to a
 * prom-client `Registry`, without subclassing prom-client: its head (name, help, type, cluster aggregator, label
 * names, collect hook), checked as prom-client 15 checks a metric's configuration (the same errors), and its
 * registration through the registry's public `registerMetric`. A registry reads a metric through `get()` (text,
 * JSON, and so the cluster's `AggregatorRegistry`, which merges the workers' JSON by each metric's `aggregator`;
 * the histogram adds a faster source of the same text, see `compact-histogram.ts`), and `reset()`s it on
 * `resetMetrics()`. Each compact metric implements prom-client's public class typings (`Counter`, `Gauge`,
 * `Histogram` of its `index.d.ts`), so it is accepted wherever one of those is.
 */
import {
  type Aggregator,
  type Counter,
  type CounterConfiguration,
  type Gauge,
  register as globalRegistry,
  type Histogram,
} from "prom-client";

/** The metric types the compact metrics have (prom-client's `type` strings). */
export type MetricTypeName = "counter" | "gauge" | "histogram";

/** The configuration every compact metric takes (prom-client's `MetricConfiguration`, without exemplars). */
export interface HeadConfiguration {
  name: string;
  help: string;
  labelNames?: readonly string[];
  /** How the cluster's primary merges the workers' series: `sum` when absent. */
  aggregator?: Aggregator;
  /** Run (and awaited when it returns a Promise) before each read, `this` being the metric. */
  // biome-ignore lint/suspicious/noExplicitAny: prom-client's own `CollectFunction<any>`
  collect?: (this: any) => void | Promise<void>;
  enableExemplars?: boolean;
}

/** A metric's head as a registry reads it. */
export interface MetricHead {
  name: string;
  help: string;
  type: MetricTypeName;
  aggregator: Aggregator;
  labelNames: readonly string[];
  // biome-ignore lint/suspicious/noExplicitAny: prom-client's own `CollectFunction<any>`
  collect?: (this: any) => void | Promise<void>;
}

// From https://prometheus.io/docs/concepts/data_model/#metric-names-and-labels, as prom-client checks them.
const metricNamePattern = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * The head of a metric of `type` configured by `config`, checked as prom-client's metric constructor checks it.
 * @throws TypeError when `config` is not an object; Error when help or name is missing, the name or a label name
 * is invalid, `collect` is not a function, or exemplars are asked for (not supported).
 */
export function metricHead(config: HeadConfiguration, type: MetricTypeName): MetricHead {
  if (config === null || typeof config !== "object")
    throw new TypeError("constructor expected a config object");
  const { name, help, labelNames = [], aggregator = "sum", collect } = config;
  if (!help) throw new Error("Missing mandatory help parameter");
  if (!name) throw new Error("Missing mandatory name parameter");
  if (!metricNamePattern.test(name)) throw new Error("Invalid metric name");
  if (!labelNames.every((label) => labelNamePattern.test(label))) throw new Error("Invalid label name");
  if (collect && typeof collect !== "function")
    throw new Error('Optional "collect" parameter must be a function');
  if (config.enableExemplars === true) throw new Error(`${name}: exemplars are not supported`);
  return { name, help, type, aggregator, labelNames, collect };
}

/** The registries a metric joins (prom-client's global registry when absent), as its configurations name them. */
export type Registers = CounterConfiguration<string>["registers"];

/**
 * Registers `metric` on each of `registers` (prom-client's global registry when absent), as prom-client does.
 * @throws Error when a registry already holds another metric of that name.
 */
export function registerMetric<T extends string>(
  metric: Counter<T> | Gauge<T> | Histogram<T>,
  registers: Registers,
): void {
  for (const registry of registers ?? [globalRegistry]) registry.registerMetric(metric);
}

/** Runs `metric`'s collect hook as prom-client does before a read (awaited only when it returns a Promise). */
export async function runCollect(metric: MetricHead): Promise<void> {
  if (!metric.collect) return;
  const pending = metric.collect.call(metric);
  if (pending instanceof Promise) await pending;
}
