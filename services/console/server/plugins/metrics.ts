/**
 * Prometheus metrics of the console (prom-client, its own registry): process defaults, requests by route
 * template and status, sign-ins by outcome, key operations. Every label value comes from a fixed set or a
 * route template, never from what a client sends.
 */
import type { FastifyInstance } from "fastify";
import { Counter, collectDefaultMetrics, Registry } from "prom-client";
import type { ChatRefusal } from "../session/chat-session.js";

/** The console's metrics. */
export interface ConsoleMetrics {
  registry: Registry;
  /** `console_http_requests_total{method, route, status_code}`. */
  requests: Counter<"method" | "route" | "status_code">;
  /** `console_sign_ins_total{source, result}`: `source` chat|operator, `result` ok or a {@link ChatRefusal}. */
  signIns: Counter<"source" | "result">;
  /** `console_key_operations_total{operation}`: generate, revoke. */
  keyOperations: Counter<"operation">;
}

/** Creates the registry and metrics (one per app, so tests can build several apps). */
export function createMetrics(): ConsoleMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({
      name: "console_http_requests_total",
      help: "HTTP requests answered by the console, by route template and status.",
      labelNames: ["method", "route", "status_code"],
      registers: [registry],
    }),
    signIns: new Counter({
      name: "console_sign_ins_total",
      help: "Console sign-in attempts by source (chat cookie or operator master key) and result.",
      labelNames: ["source", "result"],
      registers: [registry],
    }),
    keyOperations: new Counter({
      name: "console_key_operations_total",
      help: "Key operations through the console (generate, update, block, unblock, revoke).",
      labelNames: ["operation"],
      registers: [registry],
    }),
  };
}

/** Counts every response and serves `GET /metrics` (Prometheus text format). */
export async function metricsPlugin(app: FastifyInstance, metrics: ConsoleMetrics): Promise<void> {
  app.addHook("onResponse", async (request, reply) => {
    metrics.requests.inc({
      method: request.method,
      route: request.routeOptions.url ?? "unmatched",
      status_code: String(reply.statusCode),
    });
  });
  app.get("/metrics", { config: { access: "public" } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}

export type { ChatRefusal };
