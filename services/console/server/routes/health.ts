/**
 * `GET /_health`: `{"ok":true}` when the chat's database and the gateway both answer; otherwise 503 with
 * `{"ok":false,"down":{"<dependency>":"<reason>"}}`.
 */
import type { FastifyInstance } from "fastify";
import type { RouteContext } from "./context.js";

/** Registers `GET /_health` (public). */
export async function healthRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  app.get("/_health", { config: { access: "public" } }, async (_request, reply) => {
    const checks = {
      "chat-database": () => ctx.store.ping(),
      gateway: () => ctx.gateway.liveliness(),
    };
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          await check();
          return null;
        } catch (error) {
          return [name, (error as Error).message] as const;
        }
      }),
    );
    const down = Object.fromEntries(results.filter((r) => r !== null));
    if (Object.keys(down).length === 0) return { ok: true };
    return reply.code(503).send({ ok: false, down });
  });
}
