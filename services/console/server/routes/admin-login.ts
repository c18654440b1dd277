/**
 * `POST /api/admin/login {"master_key": "sk-…"}`: operators without a chat account sign in with the gateway's
 * master key (compared in constant time), at most 5 attempts a minute per client address. The page sending
 * it must be the console's own (Origin checked).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ConsoleError, parseInput } from "../errors.js";
import { SESSION_COOKIE, sessionCookieOptions } from "../plugins/session.js";
import { auditSignIn } from "../session/sign-in-audit.js";
import type { RouteContext } from "./context.js";

/** Master-key sign-in attempts allowed per client address per minute (then 429 with retry-after). */
export const SIGN_IN_ATTEMPTS_PER_MINUTE = 5;

const loginBody = z.object({ master_key: z.string().min(1).max(1024) });

/** Constant-time equality of two secrets (hashed first, so their lengths do not leak either). */
export function secretsEqual(a: string, b: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** Registers `POST /api/admin/login` (same-origin sign-in). */
export async function adminLoginRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  const cookieOptions = sessionCookieOptions(ctx.config.publicUrl);
  const rateLimit = {
    max: SIGN_IN_ATTEMPTS_PER_MINUTE,
    timeWindow: 60_000,
    errorResponseBuilder: (_request: unknown, context: { after: string }) =>
      new ConsoleError(
        429,
        `Too many sign-in attempts from this address; try again in ${context.after}.`,
        "rate_limit_error",
        "master_key",
      ),
  };
  app.post("/api/admin/login", { config: { access: "signin", rateLimit } }, async (request, reply) => {
    const { master_key: presented } = parseInput(loginBody, request.body);
    if (!secretsEqual(presented, ctx.config.masterKey)) {
      ctx.metrics.signIns.inc({ source: "operator", result: "bad_master_key" });
      auditSignIn(ctx.gateway, request, {
        action: "console.sign_in_failed",
        source: "operator",
        reason: "bad_master_key",
      });
      throw new ConsoleError(
        401,
        "That is not the gateway's master key.",
        "authentication_error",
        "master_key",
      );
    }
    ctx.metrics.signIns.inc({ source: "operator", result: "ok" });
    if (request.consoleSession !== null) await ctx.sessions.end(request.consoleSession.id);
    const session = await ctx.sessions.create({ kind: "operator" }, ctx.now());
    reply.setCookie(SESSION_COOKIE, session.id, cookieOptions);
    auditSignIn(ctx.gateway, request, { action: "console.sign_in", principal: session.principal });
    request.log.info("operator signed in with the master key");
    return { ok: true };
  });
}
