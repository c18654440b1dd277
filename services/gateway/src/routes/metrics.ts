/**
 * `GET /metrics`: Prometheus text exposition of the gateway (no key needed, like LiteLLM's). With several
 * workers (GATEWAY_WORKERS > 1) the text is the whole gateway's, aggregated by the cluster primary; when the
 * primary cannot collect every worker the answer is 503 rather than a partial sum.
 */
import type { FastifyInstance } from "fastify";
import type { Registry } from "prom-client";
import { GatewayError } from "../errors/gateway-error.js";

export interface MetricsRouteOptions {
  /** This process's registry. */
  registry: Registry;
  /** The cluster's aggregated text, when this process is one of several workers. */
  cluster?: (() => Promise<string>) | undefined;
}

export async function metricsRoutes(app: FastifyInstance, options: MetricsRouteOptions): Promise<void> {
  const { registry, cluster } = options;
  app.get("/metrics", { config: { public: true } }, async (_request, reply) => {
    if (cluster === undefined) return reply.type(registry.contentType).send(await registry.metrics());
    let text: string;
    try {
      text = await cluster();
    } catch (error) {
      throw new GatewayError(503, `metrics unavailable: ${(error as Error).message}`, {
        type: "service_unavailable",
        cause: error,
      });
    }
    return reply.type(registry.contentType).send(text);
  });
}
