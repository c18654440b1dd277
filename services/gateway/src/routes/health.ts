/**
 * Health endpoints, LiteLLM's paths: `GET /health/liveliness` (also `/health/liveness`) answers plain text
 * while the process runs; `GET /health/readiness` reports each dependency and answers 503 when one the
 * gateway cannot serve without (the database) is down. A degraded cache (limits per instance) is still ready.
 * Only a caller with the master key sees the details (version, deployments, each dependency's state and its
 * host); everyone else gets the bare `{"status": …}` with the same HTTP status.
 */
import type { FastifyInstance } from "fastify";
import { digestOf, presentsSecret } from "../auth/bearer.js";

/** A dependency's state as shown in /health/readiness. */
export interface DependencyState {
  status: "connected" | "degraded" | "disconnected" | "disabled";
  detail?: string;
}

/** A named readiness check; `critical` failures make the gateway unready (503). */
export interface ReadinessCheck {
  name: string;
  critical: boolean;
  check(): Promise<DependencyState>;
}

export interface HealthOptions {
  checks: ReadinessCheck[];
  version: string;
  /** Number of registered deployments. */
  deployments: number;
  /** GATEWAY_MASTER_KEY: the key that sees readiness details; undefined = nobody does. */
  masterKey?: string | undefined;
}

export async function healthRoutes(app: FastifyInstance, options: HealthOptions): Promise<void> {
  const live = async (_: unknown, reply: import("fastify").FastifyReply) =>
    reply.type("text/plain; charset=utf-8").send("I'm alive!");
  app.get("/health/liveliness", { config: { public: true } }, live);
  app.get("/health/liveness", { config: { public: true } }, live);

  const master = options.masterKey === undefined ? undefined : digestOf(options.masterKey);
  app.get("/health/readiness", { config: { public: true } }, async (request, reply) => {
    const results = await Promise.all(
      options.checks.map(async (c) => {
        const state = await c.check().catch(
          (error: unknown): DependencyState => ({
            status: "disconnected",
            detail: (error as Error).message,
          }),
        );
        return [c, state] as const;
      }),
    );
    const down = results.some(([c, s]) => c.critical && s.status === "disconnected");
    const degraded = results.some(([, s]) => s.status === "degraded" || s.status === "disconnected");
    const status = down ? "unhealthy" : degraded ? "degraded" : "healthy";
    if (!presentsSecret(request.headers.authorization, master))
      return reply.code(down ? 503 : 200).send({ status });
    const body: Record<string, unknown> = {
      status,
      version: options.version,
      deployments: options.deployments,
    };
    for (const [c, s] of results) body[c.name] = s;
    return reply.code(down ? 503 : 200).send(body);
  });
}
