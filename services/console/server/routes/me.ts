/**
 * `GET /api/me`: who is signed in, the CSRF token for state-changing calls, the gateway's public URL for the
 * snippets, and the account (budget, limits, spend) provisioned just in time; a provisioning failure is
 * reported (`provisioning_error`) and retried on the next call. `POST /api/logout` ends the console session
 * and keeps the browser signed out while the same chat session lasts; `POST /signin` lifts that.
 */
import type { UserRecord } from "@platform/admin-api";
import { AdminApiError } from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import { SESSION_COOKIE, SIGNED_OUT_COOKIE, sessionCookieOptions } from "../plugins/session.js";
import { ensureProvisioned } from "../provisioning.js";
import { isAdmin } from "../session/console-sessions.js";
import { auditSignIn } from "../session/sign-in-audit.js";
import { gatewayFor, type RouteContext, sessionOf } from "./context.js";

/** Registers `GET /api/me` and `POST /api/logout` (any session). */
export async function meRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  app.get("/api/me", { config: { access: "session" } }, async (request) => {
    const session = sessionOf(request);
    const p = session.principal;
    let account: UserRecord | null = null;
    let provisioningError: { kind: string; message: string } | null = null;
    if (p.kind === "chat") {
      try {
        await ensureProvisioned(
          session,
          gatewayFor(ctx, request),
          ctx.config.userDefaults,
          ctx.sessions,
          request.log,
        );
        account = (await ctx.gateway.userInfo(p.userId)).user_info;
      } catch (error) {
        if (!(error instanceof AdminApiError)) throw error;
        request.log.warn({ kind: error.kind, status: error.status }, `provisioning failed: ${error.message}`);
        provisioningError = { kind: error.kind, message: error.message };
      }
    }
    return {
      kind: p.kind,
      user_id: p.kind === "chat" ? p.userId : null,
      email: p.kind === "chat" ? p.email : null,
      role: p.kind === "chat" ? p.role : "OPERATOR",
      is_admin: isAdmin(p),
      csrf_token: session.csrfToken,
      gateway_url: ctx.config.gatewayPublicUrl,
      chat_url: ctx.config.chatUrl,
      account,
      provisioning_error: provisioningError,
    };
  });

  const cookieOptions = sessionCookieOptions(ctx.config.publicUrl);
  app.post("/api/logout", { config: { access: "session" } }, async (request, reply) => {
    const session = sessionOf(request);
    await ctx.sessions.end(session.id);
    reply.clearCookie(SESSION_COOKIE, { path: "/" });
    auditSignIn(ctx.gateway, request, { action: "console.sign_out", principal: session.principal });
    // Without this the chat's cookie would sign the user straight back in on the next visit.
    if (session.principal.kind === "chat") {
      reply.setCookie(SIGNED_OUT_COOKIE, session.principal.chatSessionId, {
        ...cookieOptions,
        maxAge: 30 * 86_400,
      });
    }
    return { ok: true };
  });

  // "Sign in again" on /unauthorized: the chat session may sign this browser in once more.
  app.post("/signin", { config: { access: "signin" } }, async (_request, reply) => {
    reply.clearCookie(SIGNED_OUT_COOKIE, { path: "/" });
    return reply.redirect("/", 303);
  });
}
