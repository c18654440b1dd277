/**
 * Builds the gateway's fastify app from its dependencies (no listening, no I/O): plugins, routes, and the
 * error handling that turns every failure into an OpenAI-shaped error body. `server.ts` starts it;
 * `gateway.ts` assembles the dependencies from the environment.
 */
import { randomUUID } from "node:crypto";
import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyServerOptions,
  LogController,
} from "fastify";
import type { AuthFailureLimiter } from "./auth/failure-limiter.js";
import type { KeyAuthenticator, UserAttributor } from "./auth/types.js";
import type { ServerTimeouts } from "./config/env.js";
import { modelRoutes } from "./endpoints/index.js";
import { gatewayErrorHandler } from "./errors/error-handler.js";
import { GatewayError } from "./errors/gateway-error.js";
import type { CallGuard } from "./guardrails/types.js";
import type { Admitter } from "./limits/types.js";
import { type McpGuard, type McpUpstream, mcpRoutes, mcpServerListRoutes } from "./mcp/index.js";
import { mcpMetrics } from "./mcp/metrics.js";
import type { GatewayMetrics } from "./metrics/metrics.js";
import type { CallObserver } from "./pipeline/types.js";
import authPlugin from "./plugins/auth.js";
import { registerJsonBodyParser } from "./plugins/json-body.js";
import type { ResponseCache } from "./response-cache/index.js";
import { ResponseOwnerStore } from "./response-owners/store.js";
import type { ResponseOwners } from "./response-owners/types.js";
import type { Router } from "./router/router.js";
import { consoleRoutes } from "./routes/console.js";
import { healthRoutes, type ReadinessCheck } from "./routes/health.js";
import { metricsRoutes } from "./routes/metrics.js";
import { modelInfoRoutes } from "./routes/model-info.js";
import { modelsRoutes } from "./routes/models.js";
import {
  DEFAULT_REFUSAL_ROWS_PER_KEY_PER_MINUTE,
  RefusalRowQuota,
  withRefusalQuota,
} from "./spend/refusal-row-quota.js";
import type { SpendRecorder } from "./spend/types.js";
import type { Clock } from "./time/clock.js";
import type { ToolCallTracer } from "./tracing/tool-call-trace.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The OpenAI error `type` of a failed request (metric label). */
    errorType: string | undefined;
    /** Why a failed request was refused, for its spend-log row (`GatewayError.reason`). */
    errorReason: string | undefined;
  }
}

/** What the app is built from. */
export interface AppDeps {
  router: Router;
  metrics: GatewayMetrics;
  /** GET /metrics text of all cluster workers together (GATEWAY_WORKERS > 1); default: `metrics.registry`. */
  clusterMetrics?: (() => Promise<string>) | undefined;
  clock: Clock;
  /** GATEWAY_MASTER_KEY. */
  masterKey: string | undefined;
  /** Largest accepted body, bytes. */
  maxBodyBytes: number;
  keys?: KeyAuthenticator;
  /** Books the chat's service-key calls on the chat user they name (needs the database). */
  users?: UserAttributor;
  /** METRICS_TOKEN: the bearer token GET /metrics requires; default none. */
  metricsToken?: string | undefined;
  /** Per-source limit on invalid keys (GATEWAY_AUTH_FAILURE_LIMIT); default: none. */
  authFailures?: AuthFailureLimiter;
  /**
   * fastify's `trustProxy` (GATEWAY_TRUSTED_PROXIES): addresses or CIDRs of reverse proxies whose
   * X-Forwarded-For names the client; default none (the socket's address is the client).
   */
  trustProxy?: string | undefined;
  /** CONSOLE_PUBLIC_URL: where GET /ui sends operators (the console's admin sign-in). */
  consolePublicUrl?: string | undefined;
  admitter?: Admitter;
  spend?: SpendRecorder;
  /** Guardrails on the model endpoints (see `pipeline/types.ts`). */
  guard?: CallGuard;
  /**
   * `/mcp`: the upstream MCP servers (`mcp_servers:`), the guardrails their tool calls run and the tracer that
   * records them (when tracing is on); absent: no route.
   */
  mcp?: { upstreams: McpUpstream[]; guard: McpGuard | undefined; tracer?: ToolCallTracer };
  /** Told about every finished model call, after the response (tracing). */
  observers?: CallObserver[];
  /** A stream is ended after this long, ms (`GATEWAY_MAX_STREAM_DURATION_MS`; 0: never; default 30 minutes). */
  maxStreamDurationMs?: number;
  /** A stream whose client reads nothing this long is ended, ms (`stream_client_idle_timeout`; default 60 s). */
  streamClientIdleTimeoutMs?: number;
  /**
   * Owners of the relayed Responses-API responses (`response-owners/`): the Postgres-backed store with a
   * database; default: an in-process one.
   */
  responseOwners?: ResponseOwners;
  /** The exact response cache (`litellm_settings.cache: true`; `response-cache/`); absent: none. */
  responseCache?: ResponseCache;
  /** Spend-log rows of refused or failed calls a key may add per minute (default {@link DEFAULT_REFUSAL_ROWS_PER_KEY_PER_MINUTE}). */
  refusalRowsPerKeyPerMinute?: number;
  /**
   * Admin API (/key/*, /user/*, /spend/*); each handler checks for the master key itself. Without a database
   * the gateway passes the plugin that answers 501 "needs DATABASE_URL" on the same paths.
   */
  adminRoutes?: FastifyPluginAsync;
  /** Client connection timeouts, ms (default: {@link DEFAULT_TIMEOUTS}). */
  timeouts?: ServerTimeouts;
  readiness: ReadinessCheck[];
  version: string;
  /** fastify's `logger` / `loggerInstance` option. */
  logger?: FastifyServerOptions["logger"];
  loggerInstance?: FastifyServerOptions["loggerInstance"];
}

/** The defaults of GATEWAY_REQUEST_TIMEOUT_MS, …_HEADERS_…, …_KEEP_ALIVE_… and …_CONNECTION_TIMEOUT_MS. */
export const DEFAULT_TIMEOUTS: ServerTimeouts = {
  requestMs: 60_000,
  headersMs: 10_000,
  keepAliveMs: 72_000,
  connectionMs: 600_000,
};

/** Creates the app. Throws only for programming errors (duplicate routes). */
export function buildApp(deps: AppDeps): FastifyInstance {
  const timeouts = deps.timeouts ?? DEFAULT_TIMEOUTS;
  // Node checks request and header deadlines on an interval (default 30 s): check often enough to keep them.
  const deadlines = [timeouts.requestMs, timeouts.headersMs].filter((ms) => ms > 0);
  const checkEveryMs = Math.min(30_000, Math.max(50, Math.floor(Math.min(...deadlines, 60_000) / 4)));
  const app = Fastify({
    ...(deps.loggerInstance ? { loggerInstance: deps.loggerInstance } : { logger: deps.logger ?? false }),
    bodyLimit: deps.maxBodyBytes,
    genReqId: () => randomUUID(),
    ...(deps.trustProxy === undefined ? {} : { trustProxy: deps.trustProxy }),
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: "idle",
    requestTimeout: timeouts.requestMs,
    connectionTimeout: timeouts.connectionMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: { headersTimeout: timeouts.headersMs, connectionsCheckingInterval: checkEveryMs },
    // Request lines are not logged (they would carry model names and ids at 1,000s/s); errors are.
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.decorateRequest("errorType", undefined);
  app.decorateRequest("errorReason", undefined);

  registerJsonBodyParser(app);

  app.setErrorHandler(gatewayErrorHandler(deps.maxBodyBytes));
  app.setNotFoundHandler((request, reply) => {
    const error = new GatewayError(404, `No route ${request.method} ${request.url.split("?")[0]}.`, {
      type: "invalid_request_error",
      code: "not_found",
    });
    return reply.code(404).send(error.toBody());
  });

  app.addHook("onSend", async (request, reply) => {
    reply.header("x-request-id", request.id);
  });

  app.register(authPlugin, {
    masterKey: deps.masterKey,
    keys: deps.keys,
    users: deps.users,
    failures: deps.authFailures,
  });
  app.register(consoleRoutes, { consolePublicUrl: deps.consolePublicUrl });
  app.register(healthRoutes, {
    checks: deps.readiness,
    version: deps.version,
    deployments: deps.router.models().length,
    masterKey: deps.masterKey,
  });
  app.register(metricsRoutes, {
    registry: deps.metrics.registry,
    cluster: deps.clusterMetrics,
    token: deps.metricsToken,
  });
  app.register(modelsRoutes, { router: deps.router });
  app.register(modelInfoRoutes, { router: deps.router });
  // Every route's spend rows pass one quota of refusal rows per key (model endpoints and /mcp alike).
  const spend =
    deps.spend === undefined
      ? undefined
      : withRefusalQuota(
          deps.spend,
          new RefusalRowQuota({
            perMinute: deps.refusalRowsPerKeyPerMinute ?? DEFAULT_REFUSAL_ROWS_PER_KEY_PER_MINUTE,
            clock: deps.clock,
            registry: deps.metrics.registry,
          }),
        );
  app.register(modelRoutes, {
    router: deps.router,
    metrics: deps.metrics,
    clock: deps.clock,
    admitter: deps.admitter,
    spend,
    guard: deps.guard,
    observers: deps.observers ?? [],
    responseOwners: deps.responseOwners ?? new ResponseOwnerStore({ clock: deps.clock }),
    ...(deps.responseCache === undefined ? {} : { responseCache: deps.responseCache }),
    ...(deps.maxStreamDurationMs === undefined ? {} : { maxStreamDurationMs: deps.maxStreamDurationMs }),
    ...(deps.streamClientIdleTimeoutMs === undefined
      ? {}
      : { streamClientIdleTimeoutMs: deps.streamClientIdleTimeoutMs }),
  });
  if (deps.mcp) {
    const metrics = mcpMetrics(deps.metrics.registry);
    const mcp = { ...deps.mcp, admitter: deps.admitter, spend, metrics, clock: deps.clock };
    app.register(mcpRoutes, { deps: mcp });
    app.register(mcpServerListRoutes, { upstreams: deps.mcp.upstreams });
  }
  if (deps.adminRoutes) app.register(deps.adminRoutes);
  return app;
}
