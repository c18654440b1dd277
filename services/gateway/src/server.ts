/**
 * Starts the gateway: reads the environment, assembles it, listens, and shuts down gracefully on SIGTERM or
 * SIGINT (stop accepting, finish in-flight requests and streams within GATEWAY_SHUTDOWN_TIMEOUT_MS, flush
 * spend). Start-up problems (bad config, missing key, unreachable database) print one clear message and
 * exit with status 1.
 *
 * With GATEWAY_WORKERS > 1 this process becomes the cluster primary (`cluster/primary.ts`) and each worker it
 * forks runs this file again as one whole gateway; the primary then owns signals, restarts and start-up errors.
 */
import cluster from "node:cluster";
import { type Logger, pino } from "pino";
import { runPrimary } from "./cluster/primary.js";
import { type WorkerLink, workerLink } from "./cluster/worker-link.js";
import { loadOperatorEnv, operatorEnvFile } from "./config/dotenv.js";
import { type GatewayEnv, readEnv, repoRoot } from "./config/env.js";
import { EMBEDDED_POOL_MAX, startEmbeddedDatabase } from "./db/embedded.js";
import { describeDatabase } from "./db/pool.js";
import { createGateway, type GatewayOptions } from "./gateway.js";
import type { GatewayMetrics } from "./metrics/metrics.js";
import { METRICS_TOKEN_UNSET_NOTE } from "./routes/metrics.js";

async function main(): Promise<void> {
  // Run from source, the gateway reads the operator's .env at the repository root (the same file the stack reads);
  // variables already set in the environment win. In the image there is no such file. GATEWAY_ENV_FILE names
  // another file, or none when empty.
  const envFile = operatorEnvFile(repoRoot);
  const notes = envFile === undefined ? [] : loadOperatorEnv(envFile);
  let env = readEnv();
  if (env.workers > 1 && env.databaseUrl === undefined && env.embeddedDbDir !== undefined) {
    notes.push(
      `GATEWAY_WORKERS=${env.workers} ignored: the embedded database serves one gateway process; ` +
        "set DATABASE_URL to a Postgres server to run several",
    );
    env = { ...env, workers: 1 };
  }
  if (env.workers > 1 && cluster.isPrimary) {
    const log = pino({ level: env.logLevel, base: { service: "gateway", role: "primary" } });
    for (const note of notes) log.info(note);
    for (const warning of environmentWarnings(env)) log.warn(warning);
    runPrimary(env, log);
    return;
  }
  const link = workerLink();
  try {
    await serve(env, link, notes);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // A worker leaves the message to its primary, which prints it once for all workers.
    if (link !== undefined) await link.startFailed(message);
    else process.stderr.write(`gateway: cannot start: ${message}\n`);
    process.exit(1);
  }
}

/** Runs one gateway in this process until a signal (or, in a worker, the primary's order) stops it. */
async function serve(env: GatewayEnv, link: WorkerLink | undefined, notes: string[]): Promise<void> {
  const logger = pino({
    level: env.logLevel,
    base:
      link === undefined
        ? { service: "gateway" }
        : { service: "gateway", worker: link.slot, pid: process.pid },
  });
  const database = await openDatabase(env, logger);
  const gateway = await createGateway(database.env, {
    logger,
    clusterMetrics: link === undefined ? undefined : () => link.clusterMetrics(),
    store: database.store,
  }).catch(async (error: unknown) => {
    await database.close();
    throw error;
  });
  const log = gateway.app.log;
  // A worker's primary has said these once already.
  if (link === undefined) {
    for (const note of notes) log.info(note);
    for (const warning of environmentWarnings(database.env)) log.warn(warning);
  }
  let signals = 0;
  const stop = (signal: string) => {
    signals++;
    if (signals > 1) {
      log.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    log.info({ signal, timeoutMs: env.shutdownTimeoutMs }, "shutting down: finishing in-flight requests");
    gateway
      .shutdown(env.shutdownTimeoutMs)
      .then(() => database.close())
      .then(
        async () => {
          if (link !== undefined) log.info({ calls: await callsServed(gateway.metrics) }, "worker stopped");
          log.info("shutdown complete");
          process.exit(0);
        },
        (error: unknown) => {
          log.error({ err: error }, "shutdown failed");
          process.exit(1);
        },
      );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  if (link === undefined) process.on("SIGINT", () => stop("SIGINT"));
  else {
    // Ctrl-C reaches the whole process group: the primary decides, and tells every worker.
    process.on("SIGINT", () => undefined);
    link.onShutdown(() => stop("primary"));
    link.serveMetrics(gateway.metrics.registry);
  }

  const address = await gateway.app.listen({ port: env.port, host: env.host });
  link?.ready();
  const models = gateway.router.models().map((m) => m.id);
  log.info(
    { address, config: env.configPath, models },
    models.length === 0
      ? "gateway listening; no model registered yet (add one to litellm/config.yaml)"
      : "gateway listening",
  );
}

/**
 * The database this gateway runs on, said in one start-up line: DATABASE_URL's server; else, with
 * GATEWAY_EMBEDDED_DB (`npm start`), the embedded PGlite database in that folder (`db/embedded.ts`), whose URL
 * the returned `env` then carries; else none.
 * @throws EmbeddedDatabaseError when the embedded database cannot start.
 */
async function openDatabase(
  env: GatewayEnv,
  log: Logger,
): Promise<{ env: GatewayEnv; store?: GatewayOptions["store"]; close(): Promise<void> }> {
  const none = async () => undefined;
  if (env.databaseUrl !== undefined) {
    log.info({ database: describeDatabase(env.databaseUrl) }, "database: Postgres server (DATABASE_URL)");
    return { env, close: none };
  }
  if (env.embeddedDbDir === undefined) {
    log.info(
      "database: none (DATABASE_URL not set): only the master key works, key and user routes answer 501",
    );
    return { env, close: none };
  }
  log.info(
    { dataDir: env.embeddedDbDir },
    "database: opening the embedded PostgreSQL (PGlite); its first start creates it, which takes a while",
  );
  const embedded = await startEmbeddedDatabase(env.embeddedDbDir);
  log.info(
    { database: "embedded", dataDir: embedded.dataDir },
    `database: embedded PostgreSQL (PGlite), data in ${embedded.dataDir} (kept across restarts; ` +
      "set DATABASE_URL to use a Postgres server instead)",
  );
  return {
    env: { ...env, databaseUrl: embedded.url },
    // PGlite serves one session: spend is written on the event loop, through the pool's one connection.
    store: { poolMax: EMBEDDED_POOL_MAX, databaseName: `embedded:${embedded.dataDir}`, spendThread: false },
    close: () => embedded.close(),
  };
}

/** Settings that start a gateway that cannot do everything the operator probably expects. */
function environmentWarnings(env: GatewayEnv): string[] {
  const warnings: string[] = [];
  if (env.masterKey === undefined) {
    warnings.push(
      "GATEWAY_MASTER_KEY is not set: only virtual keys are accepted and the admin API is closed.",
    );
  }
  if (env.metricsToken === undefined) warnings.push(METRICS_TOKEN_UNSET_NOTE);
  if (env.chatServiceKey !== undefined && env.databaseUrl === undefined) {
    warnings.push(
      "CHAT_SERVICE_KEY is set but DATABASE_URL is not: the chat's service key cannot exist, its calls get 401.",
    );
  }
  return warnings;
}

/** Chat calls this process answered (any status): the sum of its own `litellm_proxy_total_requests_metric_total`. */
async function callsServed(metrics: GatewayMetrics): Promise<number> {
  const values = (await metrics.requests.get()).values;
  return values.reduce((sum, v) => sum + v.value, 0);
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`gateway: cannot start: ${message}\n`);
  process.exit(1);
});
