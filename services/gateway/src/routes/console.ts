/**
 * `GET /ui`: where LiteLLM serves its admin UI, the gateway sends operators to the key console's admin sign-in
 * (`${CONSOLE_PUBLIC_URL}/admin/login`, 302), which checks the master key itself; no key is needed here.
 * Without CONSOLE_PUBLIC_URL it answers a short plain-text note saying how to set it.
 */
import type { FastifyInstance } from "fastify";

/** Options of {@link consoleRoutes}. */
export interface ConsoleRoutesOptions {
  /** CONSOLE_PUBLIC_URL without a trailing slash, or undefined when not configured. */
  consolePublicUrl: string | undefined;
}

/** The console's admin sign-in path. */
export const ADMIN_LOGIN_PATH = "/admin/login";

/** Registers `GET /ui` (and `/ui/`). */
export async function consoleRoutes(app: FastifyInstance, options: ConsoleRoutesOptions): Promise<void> {
  const target =
    options.consolePublicUrl === undefined ? undefined : `${options.consolePublicUrl}${ADMIN_LOGIN_PATH}`;
  for (const url of ["/ui", "/ui/"]) {
    app.get(url, { config: { public: true } }, async (_request, reply) => {
      if (target !== undefined) return reply.redirect(target, 302);
      return reply
        .code(404)
        .type("text/plain; charset=utf-8")
        .send(
          "The key console is not configured for this gateway. Set CONSOLE_PUBLIC_URL to the console's public URL " +
            "(e.g. https://console.example.com); GET /ui then redirects to its admin sign-in. The Pulumi stack sets it.\n",
        );
    });
  }
}
