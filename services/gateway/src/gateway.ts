/**
 * Assembles a gateway from its environment: loads litellm/config.yaml, creates the metrics, the router,
 * the key store (with DATABASE_URL) and the limits (REDIS_URL, or in process), and builds the app.
 * Also owns the orderly shutdown. Used by `server.ts`, the tests and the benchmark.
 */
import { createRequire } from "node:module";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { pino } from "pino";
import { buildApp } from "./app.js";
import { startAuditRetention } from "./audit/query.js";
import { createFailureLimiter } from "./auth/failure-limiter.js";
import { ExhaustedBudgets, withExhaustedBudgets } from "./budgets/exhausted.js";
import { type BudgetSenderOptions, startBudgetSender } from "./budgets/sender.js";
import type { GatewayEnv } from "./config/env.js";
import { loadModelConfig } from "./config/load-model-config.js";
import { createGuardrails } from "./guardrails/index.js";
import { createLimits, type LimitsOptions } from "./limits/index.js";
import { createMcpUpstreams } from "./mcp/index.js";
import { createMetrics, type GatewayMetrics } from "./metrics/metrics.js";
import type { CallObserver } from "./pipeline/types.js";
import { createResponseCache } from "./response-cache/index.js";
import { createSemanticCache } from "./response-cache/semantic/index.js";
import type { SemanticSweeperOptions } from "./response-cache/semantic/sweeper.js";
import { ResponseOwnerStore } from "./response-owners/store.js";
import { CapIgnorers } from "./router/cap-ignorers.js";
import { Router } from "./router/router.js";
import { adminNeedsDatabase, createAdminRoutes } from "./routes/admin/index.js";
import type { ReadinessCheck } from "./routes/health.js";
import { createStore, type Store, type StoreOptions } from "./store/index.js";
import { type Clock, systemClock } from "./time/clock.js";
import { type CallTracer, createLangfuseTracer } from "./tracing/langfuse-tracer.js";
import { tracingObserver } from "./tracing/observer.js";

const { version } = createRequire(import.meta.url)("../package.json") as { version: string };

export interface GatewayOptions {
  clock?: Clock;
  /** A pino logger; default: pino at `env.logLevel` on stdout. */
  logger?: FastifyBaseLogger;
  /**
   * Store tuning (spend flush interval, key cache, start-up wait; tests shorten them) and, for the embedded
   * database, its pool size, name and spend written on the event loop (`spendThread: false`).
   */
  store?: Partial<
    Pick<
      StoreOptions,
      | "flushIntervalMs"
      | "keyCache"
      | "startupTimeoutMs"
      | "maxBufferedSpendRows"
      | "poolMax"
      | "spendThread"
      | "databaseName"
    >
  >;
  /**
   * Budget webhook sender tuning (BUDGET_WEBHOOK_URL): pass interval and retry backoff, ms; tests shorten them.
   * Defaults: see `budgets/sender.ts`.
   */
  budgetSender?: Partial<
    Pick<
      BudgetSenderOptions,
      "intervalMs" | "initialBackoffMs" | "maxBackoffMs" | "maxAttempts" | "timeoutMs"
    >
  >;
  /** Limits tuning (Redis key prefix, timings); tests isolate themselves by prefix. */
  limits?: Partial<Pick<LimitsOptions, "keyPrefix" | "redisTimings">>;
  /**
   * In a cluster worker (GATEWAY_WORKERS > 1): the whole gateway's Prometheus text, which GET /metrics serves
   * instead of this process's registry (`cluster/worker-link.ts`).
   */
  clusterMetrics?: () => Promise<string>;
  /** The semantic cache's sweeper of expired rows (interval ms, batch size); tests shorten them. */
  semanticSweep?: Pick<SemanticSweeperOptions, "everyMs" | "batchRows" | "batchesPerPass">;
}

/** A ready-to-listen gateway and its shutdown. */
export interface Gateway {
  app: FastifyInstance;
  metrics: GatewayMetrics;
  router: Router;
  /** Config warnings (ignored LiteLLM keys), already logged. */
  warnings: string[];
  /** The key store, when DATABASE_URL is set. */
  store: Store | undefined;
  /**
   * Stops accepting requests, lets in-flight ones (streams too) finish for up to `timeoutMs`, then cuts the
   * rest, flushes spend and closes the database, cache and upstream pools. Safe to call twice.
   */
  shutdown(timeoutMs: number): Promise<void>;
}

/**
 * Creates a gateway.
 * @throws ConfigError (config file), PolicyError (guardrail policy), or the store's start-up error when the database stays unreachable.
 */
export async function createGateway(env: GatewayEnv, options: GatewayOptions = {}): Promise<Gateway> {
  const clock = options.clock ?? systemClock;
  const log = options.logger ?? pino({ level: env.logLevel, base: { service: "gateway" } });
  const config = loadModelConfig(env.configPath);
  for (const warning of config.warnings) log.warn(warning);
  const metrics = createMetrics();
  // The guardrail policy (GUARDRAIL_POLICY) merged with LiteLLM's `guardrails:` list from the config.
  const guardrails = createGuardrails({
    policyPath: env.policyPath,
    litellm:
      config.guardrails.length > 0 ? { guardrails: config.guardrails, file: config.sourcePath } : undefined,
    registry: metrics.registry,
  });
  for (const warning of guardrails.warnings) log.warn(warning);
  log.info(guardrails.summary);
  const readiness: ReadinessCheck[] = [];
  const closers: Array<() => Promise<void>> = [];

  const limits = createLimits({
    redisUrl: env.redisUrl,
    keyPrefix: env.redisKeyPrefix,
    clock,
    log,
    registry: metrics.registry,
    ...options.limits,
  });
  closers.push(() => limits.close());
  // Deployments that ignore output caps, shared by every instance through Redis and the bus (router/cap-ignorers.ts).
  const capIgnorers = new CapIgnorers({
    clock,
    deployments: config.deployments,
    redis: limits.redis,
    bus: limits.bus,
    log,
  });
  const router = new Router(config, metrics, clock, { capIgnorers });
  readiness.push({ name: "cache", critical: false, check: () => limits.readiness() });

  let admitter = limits.admitter;
  let store: Store | undefined;
  if (env.databaseUrl !== undefined) {
    try {
      store = await createStore({
        databaseUrl: env.databaseUrl,
        clock,
        bus: limits.bus,
        spoolDir: env.spoolDir,
        runMigrations: env.runMigrations,
        log,
        registry: metrics.registry,
        userDefaults: env.userDefaults,
        chatServiceKey: env.chatServiceKey,
        ...options.store,
      });
    } catch (error) {
      await limits.close();
      throw error;
    }
    const opened = store;
    closers.push(async () => {
      await opened.close();
    });
    const stopRetention = startAuditRetention(opened.pool, env.auditRetentionDays, () => clock.now(), log);
    closers.push(async () => stopRetention());
    readiness.push({ name: "db", critical: true, check: () => opened.readiness() });
    // Budgets refused by settled spend alone become budget_exceeded events (written in the background).
    const exhausted = new ExhaustedBudgets(opened.pool, () => clock.now(), log);
    closers.push(exhausted.start(options.budgetSender?.intervalMs));
    admitter = withExhaustedBudgets(admitter, exhausted);
    if (env.budgetWebhookUrl !== undefined) {
      const stopSender = startBudgetSender({
        pool: opened.pool,
        url: env.budgetWebhookUrl,
        log,
        ...options.budgetSender,
      });
      closers.push(stopSender);
    }
  } else {
    readiness.push({
      name: "db",
      critical: false,
      check: async () => ({ status: "disabled", detail: "DATABASE_URL not set: only the master key works" }),
    });
  }

  // Who owns each relayed Responses-API response: the shared table with a database, this process without.
  const responseOwners = new ResponseOwnerStore({ clock, log, ...(store ? { pool: store.pool } : {}) });
  closers.push(() => responseOwners.close());

  const observers: CallObserver[] = [];
  let tracer: CallTracer | undefined;
  if (env.trace !== undefined) {
    tracer = createLangfuseTracer(env.trace, { registry: metrics.registry, log });
    observers.push(tracingObserver(tracer, env.trace.capture));
    // Runs after the app closed (closers run in reverse order): every finished call has been recorded.
    closers.unshift(() => tracer?.shutdown(Math.min(5000, env.shutdownTimeoutMs)) ?? Promise.resolve());
    log.info({ host: env.trace.host, capture: env.trace.capture }, "traces go to Langfuse");
  }

  // The exact response cache (litellm_settings.cache: true): on the limits' Redis connection, else in process;
  // with type postgres-semantic also the semantic cache on the gateway's Postgres (pgvector), checked here.
  const semanticSettings = config.responseCache?.semantic;
  const semantic =
    semanticSettings === undefined
      ? undefined
      : await createSemanticCache({
          settings: semanticSettings,
          pool: store?.pool,
          router,
          log,
          registry: metrics.registry,
          ...(options.semanticSweep === undefined ? {} : { sweep: options.semanticSweep }),
        });
  // Stopped before the database closes (closers run in reverse order).
  if (semantic !== undefined) closers.push(() => semantic.close());
  const responseCache =
    config.responseCache === undefined
      ? undefined
      : createResponseCache({
          settings: config.responseCache,
          redis: limits.redis,
          deployments: config.deployments,
          registry: metrics.registry,
          clock,
          log,
          ...(semantic === undefined ? {} : { semantic }),
        });

  const mcp = createMcpUpstreams(config.mcpServers ?? [], log);
  closers.push(() => mcp.close());
  const app = buildApp({
    guard: guardrails.guard,
    mcp: { upstreams: mcp.upstreams, guard: guardrails.guard, ...(tracer ? { tracer } : {}) },
    router,
    metrics,
    clusterMetrics: options.clusterMetrics,
    clock,
    masterKey: env.masterKey ?? config.masterKey,
    maxBodyBytes: env.maxBodyBytes,
    keys: store?.keys,
    users: store?.users,
    authFailures: createFailureLimiter({ limit: env.authFailureLimit, clock, redis: limits.redis }),
    trustProxy: env.trustedProxies,
    metricsToken: env.metricsToken,
    consolePublicUrl: env.consolePublicUrl,
    admitter,
    spend: store?.spend,
    responseOwners,
    ...(responseCache === undefined ? {} : { responseCache }),
    adminRoutes:
      store === undefined
        ? adminNeedsDatabase
        : createAdminRoutes({
            pool: store.pool,
            clock,
            bus: limits.bus,
            userDefaults: env.userDefaults,
            mcpServerNames: (config.mcpServers ?? []).map((server) => server.name),
            // With every guardrail off there is no engine; a key may still name the two built-in ones.
            guardrailNames: guardrails.guard?.names ?? ["pii", "prompt_injection"],
          }),
    timeouts: env.timeouts,
    maxStreamDurationMs: env.maxStreamDurationMs,
    ...(env.refusalRowsPerKeyPerMinute === undefined
      ? {}
      : { refusalRowsPerKeyPerMinute: env.refusalRowsPerKeyPerMinute }),
    ...(config.streamClientIdleTimeoutMs === undefined
      ? {}
      : { streamClientIdleTimeoutMs: config.streamClientIdleTimeoutMs }),
    readiness,
    observers,
    version,
    loggerInstance: log,
  });

  let closing: Promise<void> | undefined;
  const shutdown = (timeoutMs: number) => {
    closing ??= (async () => {
      const timer = setTimeout(() => {
        log.warn({ timeoutMs }, "shutdown timeout reached: closing remaining connections");
        app.server.closeAllConnections();
      }, timeoutMs);
      // Connections that go idle after their last response (a finished stream) are closed at once, not
      // after the keep-alive timeout.
      const sweeper = setInterval(() => app.server.closeIdleConnections(), 100);
      await app.close();
      clearTimeout(timer);
      clearInterval(sweeper);
      for (const close of closers.reverse()) {
        await close().catch((error: unknown) => log.error({ err: error }, "error during shutdown"));
      }
      await router.close();
    })();
    return closing;
  };

  return { app, metrics, router, warnings: config.warnings, store, shutdown };
}
