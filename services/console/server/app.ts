/**
 * Builds the console's fastify app from its dependencies (no listening, no environment reading): the session
 * hook, the JSON API, the pages and the bundle, /_health and /metrics.
 */
import fastifyCookie from "@fastify/cookie";
import fastifyRateLimit from "@fastify/rate-limit";
import type { AdminApiClient } from "@platform/admin-api";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import type { ConsoleConfig } from "./config.js";
import { installErrorHandler } from "./errors.js";
import { type ConsoleMetrics, createMetrics, metricsPlugin } from "./plugins/metrics.js";
import { securityHeaders } from "./plugins/security-headers.js";
import { sessionPlugin } from "./plugins/session.js";
import { adminRoutes } from "./routes/admin.js";
import { adminLoginRoutes } from "./routes/admin-login.js";
import type { RouteContext } from "./routes/context.js";
import { exportRoutes } from "./routes/export.js";
import { healthRoutes } from "./routes/health.js";
import { keyRoutes } from "./routes/keys.js";
import { meRoutes } from "./routes/me.js";
import { pageRoutes } from "./routes/pages.js";
import { teamKeyRoutes } from "./routes/team-keys.js";
import { teamMemberRoutes } from "./routes/team-members.js";
import { teamRoutes } from "./routes/teams.js";
import { usageRoutes } from "./routes/usage.js";
import { ConsoleSessions } from "./session/console-sessions.js";
import type { LibreChatStore } from "./session/librechat-store.js";
import type { SessionBackend } from "./session/session-backends.js";

/** What {@link buildApp} needs. */
export interface ConsoleDeps {
  config: ConsoleConfig;
  /** The gateway admin API client (master key). */
  gateway: AdminApiClient;
  /** LibreChat's sessions and users, read-only. */
  store: LibreChatStore;
  /** Folder of the built web bundle, or null (pages then answer 503 saying how to build it). */
  webRoot: string | null;
  /** Where sessions live (`session/open-backend.ts`); default process memory. */
  sessionBackend?: SessionBackend;
  /** Clock, epoch ms (default Date.now). */
  now?: () => number;
  metrics?: ConsoleMetrics;
  /** fastify's `loggerInstance`; default no logging. */
  loggerInstance?: FastifyServerOptions["loggerInstance"];
}

/** The app and the session table (tests inspect it). */
export interface ConsoleApp {
  app: FastifyInstance;
  sessions: ConsoleSessions;
  metrics: ConsoleMetrics;
}

/** Assembles the console. Call `app.ready()` or `listen()` afterwards. */
export async function buildApp(deps: ConsoleDeps): Promise<ConsoleApp> {
  const app = Fastify({
    ...(deps.loggerInstance ? { loggerInstance: deps.loggerInstance } : { logger: false }),
    trustProxy: true,
    bodyLimit: 64 * 1024,
  });
  const now = deps.now ?? Date.now;
  const metrics = deps.metrics ?? createMetrics();
  const sessions = new ConsoleSessions(deps.config.idleTimeoutMs, deps.sessionBackend);
  const ctx: RouteContext = {
    config: deps.config,
    gateway: deps.gateway,
    sessions,
    store: deps.store,
    metrics,
    now,
    webRoot: deps.webRoot,
  };
  installErrorHandler(app);
  await app.register(fastifyCookie);
  await securityHeaders(app);
  // Off by default; routes opt in with `config.rateLimit` (the master-key sign-in).
  await app.register(fastifyRateLimit, { global: false });
  // The hooks must reach every route, so they are registered on the root instance, not in a plugin scope.
  await sessionPlugin(app, {
    config: deps.config,
    gateway: ctx.gateway,
    sessions,
    store: deps.store,
    metrics,
    now,
  });
  await metricsPlugin(app, metrics);
  await healthRoutes(app, ctx);
  await pageRoutes(app, ctx);
  await meRoutes(app, ctx);
  await adminLoginRoutes(app, ctx);
  await keyRoutes(app, ctx);
  await usageRoutes(app, ctx);
  await adminRoutes(app, ctx);
  await exportRoutes(app, ctx);
  await teamRoutes(app, ctx);
  await teamMemberRoutes(app, ctx);
  await teamKeyRoutes(app, ctx);
  return { app, sessions, metrics };
}
