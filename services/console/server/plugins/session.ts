/**
 * Who is asking: resolves the console session of each request and enforces the route's `access`.
 *
 * - A live console session (cookie `console_session`) is used as is; a chat user's is re-checked against the
 *   chat's database once `REVALIDATE_MS` have passed since its last check (a chat logout deletes the chat
 *   session, so the console signs that user out within a minute; an unreachable database also signs out).
 * - Without one, the chat's `refreshToken` cookie is verified and a session created, unless the user signed
 *   out of the console during that chat session ({@link SIGNED_OUT_COOKIE}).
 * - Pages without a session redirect to /unauthorized; API routes answer 401.
 * - State-changing requests need a same-origin `Origin` (when sent) and the session's CSRF token in
 *   `x-csrf-token`.
 */
import { timingSafeEqual } from "node:crypto";
import type { AdminApiClient } from "@platform/admin-api";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ConsoleConfig } from "../config.js";
import { ConsoleError } from "../errors.js";
import { CHAT_COOKIE, verifyChatCookie } from "../session/chat-session.js";
import { type ConsoleSession, type ConsoleSessions, isAdmin } from "../session/console-sessions.js";
import type { LibreChatStore } from "../session/librechat-store.js";
import { auditSignIn } from "../session/sign-in-audit.js";
import type { ConsoleMetrics } from "./metrics.js";

/**
 * A route's access rule: `public` (anyone), `page` (an HTML page, any session, else redirect),
 * `session` (API, any session), `user` (API, a chat user's session), `admin` (API, an administrator),
 * `signin` (public, but a POST must come from the console's own origin).
 */
export type Access = "public" | "page" | "session" | "user" | "admin" | "signin";

declare module "fastify" {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    consoleSession: ConsoleSession | null;
  }
}

/** The console's session cookie. */
export const SESSION_COOKIE = "console_session";
/**
 * Set by "Sign out" to the chat session's id: that chat session no longer signs the browser in to the
 * console (a new chat sign-in, or "Sign in again" on /unauthorized, does).
 */
export const SIGNED_OUT_COOKIE = "console_signed_out";
/** How often a chat session is re-checked against the chat's database, ms. */
export const REVALIDATE_MS = 60_000;

/** What the session plugin needs. */
export interface SessionPluginDeps {
  config: ConsoleConfig;
  /** The gateway's admin API: sign-ins and refused sign-ins go to its audit log (`sign-in-audit.ts`). */
  gateway: AdminApiClient;
  sessions: ConsoleSessions;
  store: LibreChatStore;
  metrics: ConsoleMetrics;
  now: () => number;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Cookie options: httpOnly, SameSite=Lax, Secure unless the console is served from localhost. */
export function sessionCookieOptions(publicUrl: string) {
  const host = new URL(publicUrl).hostname;
  const local = host === "localhost" || host === "127.0.0.1" || host === "[::1]";
  return { path: "/", httpOnly: true, sameSite: "lax" as const, secure: !local };
}

/** True when `origin` is the console itself: the request's Host, or PUBLIC_URL's host. */
export function sameOrigin(origin: string, request: FastifyRequest, publicUrl: string): boolean {
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  return host === request.headers.host || host === new URL(publicUrl).host;
}

const tokensMatch = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Registers the session hook; see the module comment. */
export async function sessionPlugin(app: FastifyInstance, deps: SessionPluginDeps): Promise<void> {
  const { config, sessions, store, metrics, now, gateway } = deps;
  const refused = (request: FastifyRequest, reason: string) => {
    metrics.signIns.inc({ source: "chat", result: reason });
    auditSignIn(gateway, request, { action: "console.sign_in_failed", source: "chat", reason });
  };
  const cookieOptions = sessionCookieOptions(config.publicUrl);
  app.decorateRequest("consoleSession", null);

  async function signInFromChat(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<ConsoleSession | null> {
    const verdict = await verifyChatCookie(
      request.cookies[CHAT_COOKIE],
      config.jwtRefreshSecret,
      store,
      now(),
    );
    if (!verdict.ok) {
      // A visit without a cookie is not a failed sign-in.
      if (verdict.reason !== "no_cookie") refused(request, verdict.reason);
      if (verdict.reason === "store_unavailable") {
        request.log.warn({ detail: verdict.detail }, "chat database unreachable: sign-in refused");
      }
      return null;
    }
    const { identity } = verdict;
    if (request.cookies[SIGNED_OUT_COOKIE] === identity.sessionId) return null;
    metrics.signIns.inc({ source: "chat", result: "ok" });
    const session = await sessions.create(
      {
        kind: "chat",
        userId: identity.userId,
        chatSessionId: identity.sessionId,
        email: identity.email,
        role: identity.role,
      },
      now(),
    );
    reply.setCookie(SESSION_COOKIE, session.id, cookieOptions);
    auditSignIn(gateway, request, { action: "console.sign_in", principal: session.principal });
    return session;
  }

  async function resolve(request: FastifyRequest, reply: FastifyReply): Promise<ConsoleSession | null> {
    const existing = await sessions.touch(request.cookies[SESSION_COOKIE], now());
    if (existing !== null) {
      const p = existing.principal;
      if (p.kind === "operator" || now() - existing.validatedAt < REVALIDATE_MS) return existing;
      const verdict = await verifyChatCookie(
        request.cookies[CHAT_COOKIE],
        config.jwtRefreshSecret,
        store,
        now(),
      );
      if (verdict.ok && verdict.identity.userId === p.userId) {
        existing.validatedAt = now();
        existing.principal = { ...p, email: verdict.identity.email, role: verdict.identity.role };
        await sessions.save(existing);
        return existing;
      }
      await sessions.end(existing.id);
      reply.clearCookie(SESSION_COOKIE, { path: "/" });
      if (!verdict.ok) {
        refused(request, verdict.reason);
        return null;
      }
      // The chat cookie now belongs to another user: sign that user in instead.
    }
    return signInFromChat(request, reply);
  }

  app.addHook("preHandler", async (request, reply) => {
    const access = request.routeOptions.config.access ?? "public";
    if (access === "public") return;
    const unsafe = !SAFE_METHODS.has(request.method);
    const origin = request.headers.origin;
    if (unsafe && origin !== undefined && !sameOrigin(origin, request, config.publicUrl)) {
      throw new ConsoleError(403, "Cross-origin request refused.", "csrf_error");
    }
    if (access === "signin") {
      if (unsafe && origin === undefined) {
        throw new ConsoleError(403, "Sign-in requests must come from the console's page.", "csrf_error");
      }
      request.consoleSession = await sessions.touch(request.cookies[SESSION_COOKIE], now());
      return;
    }
    const session = await resolve(request, reply);
    request.consoleSession = session;
    if (session === null) {
      // Without a chat (operator-only mode) the only way in is the master key's sign-in.
      if (access === "page") {
        return reply.redirect(config.mongoUri === undefined ? "/admin/login" : "/unauthorized", 302);
      }
      throw new ConsoleError(401, "No console session: sign in to the chat first.", "authentication_error");
    }
    if (unsafe) {
      const sent = request.headers["x-csrf-token"];
      if (typeof sent !== "string" || !tokensMatch(sent, session.csrfToken)) {
        throw new ConsoleError(403, "Missing or wrong CSRF token (x-csrf-token).", "csrf_error");
      }
    }
    if (access === "user" && session.principal.kind !== "chat") {
      throw new ConsoleError(
        403,
        "An operator session has no keys or usage of its own; use the Admin view.",
        "permission_error",
      );
    }
    if (access === "admin" && !isAdmin(session.principal)) {
      throw new ConsoleError(403, "Administrators only.", "permission_error");
    }
  });
}
