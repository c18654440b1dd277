/**
 * Starts the whole platform from the checkout for `npm run e2e`, each part its own process on a free port of
 * 127.0.0.1, and stops it again:
 * - real: the gateway (services/gateway/src/server.ts) on a fresh Postgres database and Redis keys under a
 *   prefix of its own (GATEWAY_REDIS_KEY_PREFIX), the scanner (scanner/src/server.ts) with the tiny model of scanner/tiny-model, the console
 *   (test/e2e/console-server.ts: the console's app with LibreChat's MongoDB as an in-process contract fake),
 *   and Prometheus (Debian's `prometheus`) scraping gateway, scanner and console every second;
 * - contract fakes of what cannot run here: the OpenAI-compatible upstream (bench/upstream.ts), Langfuse and
 *   Presidio (test/e2e/fake-server.ts).
 * Progress goes to `progress` (stderr in the runner): what is started, what is waited for.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import {
  freePort,
  readyLine,
  repoRoot,
  type Service,
  spawnService,
  waitForHttp,
} from "../../bench/lib/children.js";
import { createBenchDatabase } from "../../bench/lib/full-pipeline.js";
import { type PrometheusProcess, startPrometheus, writeScrapeConfig } from "../helpers/prometheus.js";
import { deleteKeys } from "../helpers/redis.js";

/** The gateway's master key in the run (a throw-away value: every part lives only as long as the run). */
export const E2E_MASTER_KEY = "sk-e2e-master-key-0123456789abcdef";
/** The bearer token of the gateway's `/metrics` in the run (Prometheus sends it). */
const E2E_METRICS_TOKEN = "e2e-metrics-token-0123456789abcdef";
const TRACE_PUBLIC_KEY = "pk-lf-e2e";
const TRACE_SECRET_KEY = "sk-lf-e2e";
/** The model the gateway's config registers at the fake upstream. */
export const E2E_MODEL = "general";

/** Node flag: workspace packages (@platform/admin-api) resolve to their TypeScript source, no build needed. */
const FROM_SOURCE = ["--conditions=development"];

/** Where the parts answer, and the keys smoke-test.sh needs. */
export interface Platform {
  gatewayUrl: string;
  consoleUrl: string;
  scannerUrl: string;
  upstreamUrl: string;
  traceUrl: string;
  tracePublicKey: string;
  traceSecretKey: string;
  metricsUrl: string;
  masterKey: string;
  /** The running processes, in start order (for "is everything still alive" and their logs). */
  services: Service[];
  /** Stops every process (reverse start order), drops the database and the run's Redis keys. Idempotent. */
  stop(): Promise<void>;
}

/** Settings of {@link startPlatform}. */
export interface PlatformOptions {
  /** Postgres server to create the run's database on, e.g. postgres://postgres@127.0.0.1:5432/postgres. */
  postgresAdminUrl: string;
  /** Redis server, without a database number, e.g. redis://127.0.0.1:6379. */
  redisUrl: string;
  /** One progress line (no newline). */
  progress(line: string): void;
  /** Aborting it (Ctrl-C) ends the waiting: what had started is stopped and the start rejects. */
  signal?: AbortSignal;
}

/** Checks that Redis answers, so that a missing one is named before anything starts. */
async function assertRedisReachable(redisUrl: string): Promise<void> {
  const client = new Redis(redisUrl, {
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    lazyConnect: true,
  });
  client.on("error", () => {});
  try {
    await client.ping().catch((error: Error) => {
      throw new Error(`Redis at ${redisUrl} is not reachable (${error.message}); set REDIS_URL`);
    });
  } finally {
    client.disconnect();
  }
}

/** Polls Prometheus until every target's last scrape worked; throws naming the ones that did not. */
async function waitForScrapes(
  prometheus: PrometheusProcess,
  jobs: string[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const targets = await prometheus.targets();
    const down = jobs.filter((job) => targets.find((t) => t.job === job)?.health !== "up");
    if (down.length === 0) return;
    if (Date.now() > deadline) {
      const why = down.map(
        (job) => `${job}: ${targets.find((t) => t.job === job)?.lastError || "not scraped"}`,
      );
      throw new Error(`Prometheus could not scrape ${why.join("; ")}`);
    }
    await sleep(250);
  }
}

/**
 * Starts everything and waits for each part's health.
 * @throws Error naming the part that did not come up (with the end of its log); what had started is stopped.
 */
export async function startPlatform(options: PlatformOptions): Promise<Platform> {
  const { progress } = options;
  const services: Service[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), "platform-e2e-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    })();
    return stopping;
  };
  // Last resort if the runner itself crashes: no child outlives it.
  const killLeft = () => {
    for (const { child } of services)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  process.once("exit", killLeft);
  cleanups.push(async () => void process.off("exit", killLeft));
  // Every wait races the abort signal, so Ctrl-C during start-up stops what had started at once.
  const aborted = new Promise<never>((_, reject) => {
    const abort = () => reject(new Error("interrupted"));
    if (options.signal?.aborted) abort();
    options.signal?.addEventListener("abort", abort, { once: true });
  });
  aborted.catch(() => {});
  const until = <T>(promise: Promise<T>): Promise<T> => Promise.race([promise, aborted]);
  const start = (name: string, entry: string, env: NodeJS.ProcessEnv, nodeFlags: string[] = []) => {
    const service = spawnService(name, {
      entry,
      nodeFlags,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    });
    services.push(service);
    cleanups.push(() => service.stop(5_000));
    return service;
  };

  try {
    progress(
      "starting the contract fakes: OpenAI-compatible upstream (bench/upstream.ts), Langfuse, Presidio",
    );
    const upstreamProcess = start("upstream", "bench/upstream.ts", {});
    const langfuseProcess = start("langfuse", "test/e2e/fake-server.ts", {
      E2E_FAKE: "langfuse",
      E2E_TRACE_PUBLIC_KEY: TRACE_PUBLIC_KEY,
      E2E_TRACE_SECRET_KEY: TRACE_SECRET_KEY,
    });
    const presidioProcess = start("presidio", "test/e2e/fake-server.ts", { E2E_FAKE: "presidio" });

    const scannerPort = await freePort();
    const scannerUrl = `http://127.0.0.1:${scannerPort}`;
    progress(`starting the scanner with the tiny model on ${scannerUrl}`);
    const scanner = start("scanner", "scanner/src/server.ts", {
      SCANNER_MODEL_DIR: path.join(repoRoot, "scanner/tiny-model"),
      SCANNER_MODEL: "local/tiny-prompt-injection",
      PORT: String(scannerPort),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
    });

    progress("creating a fresh Postgres database; the gateway's Redis keys get a prefix of their own");
    const db = await createBenchDatabase(options.postgresAdminUrl, "e2e");
    cleanups.push(() => db.drop());
    await assertRedisReachable(options.redisUrl);
    const redisPrefix = `gw-e2e-${process.pid}-${Date.now().toString(36)}:`;
    cleanups.push(() => deleteKeys(redisPrefix, options.redisUrl));

    progress("waiting for the upstream, Langfuse and Presidio fakes to report ready");
    const ready = (service: Service) => readyLine<{ ready: true; url: string }>(service);
    const [upstream, langfuse, presidio] = await until(
      Promise.all([ready(upstreamProcess), ready(langfuseProcess), ready(presidioProcess)]),
    );

    const config = path.join(dir, "config.yaml");
    writeFileSync(
      config,
      [
        "model_list:",
        `  - model_name: ${E2E_MODEL}`,
        "    litellm_params:",
        "      model: openai/fake-model",
        `      api_base: ${upstream.url}`,
        "      input_cost_per_token: 0.000001",
        "      output_cost_per_token: 0.000002",
        "",
      ].join("\n"),
    );
    const gatewayPort = await freePort();
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    progress(
      `starting the gateway on ${gatewayUrl} (Postgres, Redis keys under ${redisPrefix}, traces to the Langfuse fake, guardrails to the scanner and the Presidio fake)`,
    );
    const gateway = start(
      "gateway",
      "services/gateway/src/server.ts",
      {
        PORT: String(gatewayPort),
        HOST: "127.0.0.1",
        GATEWAY_CONFIG: config,
        GATEWAY_MASTER_KEY: E2E_MASTER_KEY,
        GATEWAY_SPOOL_DIR: path.join(dir, "spend-spool"),
        GATEWAY_SHUTDOWN_TIMEOUT_MS: "2000",
        // Set here so that a METRICS_TOKEN in the checkout's .env (the first run makes one) cannot differ from
        // the one Prometheus sends.
        METRICS_TOKEN: E2E_METRICS_TOKEN,
        DATABASE_URL: db.url,
        REDIS_URL: options.redisUrl,
        GATEWAY_REDIS_KEY_PREFIX: redisPrefix,
        TRACE_HOST: langfuse.url,
        TRACE_PUBLIC_KEY,
        TRACE_SECRET_KEY,
        GUARD_SCANNER_API_BASE: scannerUrl,
        PII_ANALYZER_API_BASE: presidio.url,
        PII_ANONYMIZER_API_BASE: presidio.url,
        LOG_LEVEL: "warn",
      },
      FROM_SOURCE,
    );

    const consolePort = await freePort();
    const consoleUrl = `http://127.0.0.1:${consolePort}`;
    progress(`starting the console on ${consoleUrl} (LibreChat's MongoDB: the in-process contract fake)`);
    const consoleService = start(
      "console",
      "test/e2e/console-server.ts",
      {
        PORT: String(consolePort),
        HOST: "127.0.0.1",
        PUBLIC_URL: consoleUrl,
        GATEWAY_URL: gatewayUrl,
        GATEWAY_MASTER_KEY: E2E_MASTER_KEY,
        JWT_REFRESH_SECRET: "e2e-jwt-refresh-secret-0123456789abcdef",
        MONGO_URI: "mongodb://unused.invalid/LibreChat",
        LOG_LEVEL: "warn",
      },
      FROM_SOURCE,
    );

    progress(`waiting for ${scannerUrl}/health (the model loaded)`);
    await until(waitForHttp(scanner, `${scannerUrl}/health`, 60_000));
    progress(`waiting for ${gatewayUrl}/health/readiness (database migrated, Redis connected)`);
    await until(waitForHttp(gateway, `${gatewayUrl}/health/readiness`, 60_000));
    progress(`waiting for ${consoleUrl}/_health (chat database and gateway reachable)`);
    await until(waitForHttp(consoleService, `${consoleUrl}/_health`, 60_000));

    const jobs = {
      gateway: `127.0.0.1:${gatewayPort}`,
      scanner: `127.0.0.1:${scannerPort}`,
      console: `127.0.0.1:${consolePort}`,
    };
    progress("starting Prometheus (scrape interval 1 s: gateway, scanner, console)");
    const prometheus = await startPrometheus(
      writeScrapeConfig(dir, jobs, [], { gateway: E2E_METRICS_TOKEN }),
      dir,
    );
    cleanups.push(() => prometheus.stop());
    progress(`waiting for ${prometheus.url} to scrape each target once`);
    await until(waitForScrapes(prometheus, Object.keys(jobs), 20_000));

    return {
      gatewayUrl,
      consoleUrl,
      scannerUrl,
      upstreamUrl: upstream.url,
      traceUrl: langfuse.url,
      tracePublicKey: TRACE_PUBLIC_KEY,
      traceSecretKey: TRACE_SECRET_KEY,
      metricsUrl: prometheus.url,
      masterKey: E2E_MASTER_KEY,
      services,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
