/** What the console's routes share. */
import type { AdminApiClient } from "@platform/admin-api";
import type { FastifyRequest } from "fastify";
import type { ConsoleConfig } from "../config.js";
import type { ConsoleMetrics } from "../plugins/metrics.js";
import { auditActorOf, type ConsoleSession, type ConsoleSessions } from "../session/console-sessions.js";
import type { LibreChatStore } from "../session/librechat-store.js";

/** Dependencies of the route modules. */
export interface RouteContext {
  config: ConsoleConfig;
  gateway: AdminApiClient;
  sessions: ConsoleSessions;
  store: LibreChatStore;
  metrics: ConsoleMetrics;
  now: () => number;
  /** Folder of the built web bundle (index.html, assets/), or null when it was not built. */
  webRoot: string | null;
}

/** The request's session; only for routes whose `access` requires one (the session hook guarantees it). */
export function sessionOf(request: FastifyRequest): ConsoleSession {
  const session = request.consoleSession;
  if (session === null) throw new Error("route without a session requirement asked for the session");
  return session;
}

/** The chat user id of a `user` route's session. */
export function chatUserId(request: FastifyRequest): string {
  const principal = sessionOf(request).principal;
  if (principal.kind !== "chat") throw new Error("route for chat users reached by an operator session");
  return principal.userId;
}

/**
 * The admin client acting for the request's session: its writes name the session's operator or chat user as
 * the actor in the gateway's audit log (`x-audit-actor`, see docs/security.md).
 */
export function gatewayFor(ctx: RouteContext, request: FastifyRequest): AdminApiClient {
  return ctx.gateway.as(auditActorOf(sessionOf(request).principal));
}
