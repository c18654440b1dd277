/**
 * `GET /metrics`: Prometheus text exposition of the gateway. With METRICS_TOKEN set it needs
 * `Authorization: Bearer <METRICS_TOKEN>` (Prometheus's `authorization` scrape setting; the token is compared in
 * constant time), else 401; without it, no key is needed (as LiteLLM's). Labels carry no upstream URL. With several
 * workers (GATEWAY_WORKERS > 1) the text is the whole gateway's, aggregated by the cluster primary; when the
 * primary cannot collect every worker the answer is 503 rather than a partial sum.
 */
import type { FastifyInstance } from "fastify";
import type { Registry } from "prom-client";
import { digestOf, presentsSecret } from "../auth/bearer.js";
import { GatewayError } from "../errors/gateway-error.js";

export interface MetricsRouteOptions {
  /** This process's registry. */
  registry: Registry;
  /** The cluster's aggregated text, when this process is one of several workers. */
  cluster?: (() => Promise<string>) | undefined;
  /** METRICS_TOKEN: the bearer token a scrape must send; undefined = none needed. */
  token?: string | undefined;
}

export async function metricsRoutes(app: FastifyInstance, options: MetricsRouteOptions): Promise<void> {
  const { registry, cluster } = options;
  const expected = options.token === undefined ? undefined : digestOf(options.token);
  app.get("/metrics", { config: { public: true } }, async (request, reply) => {
    if (expected !== undefined && !presentsSecret(request.headers.authorization, expected)) {
      throw new GatewayError(
        401,
        "GET /metrics needs Authorization: Bearer <METRICS_TOKEN> (set in Prometheus's scrape config as authorization credentials).",
        { type: "authentication_error", code: "invalid_metrics_token" },
      );
    }
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
