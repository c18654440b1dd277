/** `GET /metrics`: Prometheus text exposition of the scanner's registry. */
import type { FastifyInstance } from "fastify";
import type { Registry } from "prom-client";

export async function metricsRoutes(app: FastifyInstance, options: { registry: Registry }): Promise<void> {
  app.get("/metrics", async (_request, reply) =>
    reply.type(options.registry.contentType).send(await options.registry.metrics()),
  );
}
