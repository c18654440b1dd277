/**
 * The messages a cluster primary and its gateway workers exchange over the IPC channel node:cluster sets up.
 * Every message is a plain object with a `type` under `gateway:`, so prom-client's or Node's own cluster
 * messages are never mistaken for ours.
 */
import type { Registry } from "prom-client";

/** One worker's registry as `Registry.getMetricsAsJSON()` returns it. */
export type MetricsJson = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

/** Worker → primary. */
export type FromWorker =
  /** Listening: the worker serves calls from now on. */
  | { type: "gateway:ready" }
  /** The worker could not start; `message` is the one line the operator reads (no secret in it). */
  | { type: "gateway:start-failed"; message: string }
  /** The worker serving GET /metrics asks for the whole gateway's exposition text. */
  | { type: "gateway:metrics-request"; id: number }
  /** The worker's own registry, answering {@link FromPrimary} `gateway:metrics-collect` `id`. */
  | { type: "gateway:metrics-part"; id: number; metrics: MetricsJson };

/** Primary → worker. */
export type FromPrimary =
  /** Stop gracefully: finish in-flight calls within GATEWAY_SHUTDOWN_TIMEOUT_MS, flush spend, exit 0. */
  | { type: "gateway:shutdown" }
  /** Send your registry as JSON (`gateway:metrics-part` with the same `id`). */
  | { type: "gateway:metrics-collect"; id: number }
  /** The answer to `gateway:metrics-request` `id`: the aggregated text, or why there is none. */
  | { type: "gateway:metrics-result"; id: number; text?: string; error?: string };

/** Is `value` one of our messages (of either direction)? Anything else on the channel is ignored. */
export function isGatewayMessage<T extends FromWorker | FromPrimary>(value: unknown): value is T {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { type?: unknown }).type === "string" &&
    (value as { type: string }).type.startsWith("gateway:")
  );
}
