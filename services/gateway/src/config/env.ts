/**
 * The gateway's environment, read and validated in one place. README.md's "Gateway settings" table lists every
 * variable with its default.
 */
import { availableParallelism, tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { databaseUrlProblem } from "../db/pool.js";
import { readTraceSettings, type TraceSettings } from "./trace-settings.js";

/** Repository root: this file sits at services/gateway/{src,dist}/config/, in the checkout and in the image. */
export const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

const placeholder = (v: string | undefined) =>
  v === undefined || v === "" || v === "replace-me" ? undefined : v;
const optionalString = z.string().optional().transform(placeholder);
const int = (def: number) => z.coerce.number().int().nonnegative().default(def);

const envSchema = z.object({
  PORT: int(4000),
  HOST: z.string().default("0.0.0.0"),
  GATEWAY_CONFIG: z.string().default(`${repoRoot}litellm/config.yaml`),
  GUARDRAIL_POLICY: z.string().default(`${repoRoot}litellm/guardrails/policy.yaml`),
  GATEWAY_MASTER_KEY: optionalString,
  DATABASE_URL: optionalString.superRefine((value, ctx) => {
    const problem = value === undefined ? undefined : databaseUrlProblem(value);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
  }),
  /**
   * Folder of the embedded database (PGlite), used when DATABASE_URL is not set; `npm start` and `npm run dev`
   * set it to `.data/postgres` at the repository root.
   */
  GATEWAY_EMBEDDED_DB: optionalString,
  REDIS_URL: optionalString,
  /** Prefix of every Redis key and channel the gateway uses, so that several gateways (or apps) can share one Redis. */
  GATEWAY_REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, "letters, digits, _ . : - only, at most 64 characters")
    .default("gw:"),
  /** Largest accepted request body, MiB (LiteLLM: general_settings.max_request_size_mb). */
  GATEWAY_MAX_REQUEST_SIZE_MB: z.coerce.number().positive().default(10),
  /** How long SIGTERM waits for in-flight requests and streams, ms (Docker's stop timeout is 10 s). */
  GATEWAY_SHUTDOWN_TIMEOUT_MS: int(8000),
  /**
   * Whether start-up applies the database migrations (`db/migrate.ts`): `true` (default; also when empty) or
   * `false`, where a
   * rollout runs them once beforehand (the kubernetes target's `gateway-migrate` Job) and start-up only checks
   * that none is pending.
   */
  GATEWAY_RUN_MIGRATIONS: z
    .string()
    .default("true")
    .transform((value, ctx) => {
      const trimmed = value.trim();
      if (trimmed === "" || trimmed === "true") return true;
      if (trimmed === "false") return false;
      ctx.addIssue({ code: "custom", message: `must be true or false, got "${value}"` });
      return z.NEVER;
    }),
  /** Folder of the spend spool: rows Postgres could not take yet, replayed at the next start. */
  GATEWAY_SPOOL_DIR: z.string().default(join(tmpdir(), "gateway-spend-spool")),
  /** Whole request (headers and body) must arrive within this, ms (Node's server.requestTimeout). */
  GATEWAY_REQUEST_TIMEOUT_MS: int(60_000),
  /** Request headers must arrive within this, ms (Node's server.headersTimeout). */
  GATEWAY_HEADERS_TIMEOUT_MS: int(10_000),
  /** An idle kept-alive connection is closed after this, ms (Node's server.keepAliveTimeout). */
  GATEWAY_KEEP_ALIVE_TIMEOUT_MS: int(72_000),
  /** A connection with no bytes either way for this long is closed, ms (Node's server.timeout); 0 = never. */
  GATEWAY_CONNECTION_TIMEOUT_MS: int(600_000),
  /** A stream is ended (with an SSE error event) after this long, ms; 0 = never. */
  GATEWAY_MAX_STREAM_DURATION_MS: int(1_800_000),
  /**
   * Spend-log rows of refused or failed calls one key may add per minute on one instance; 0 = none; unset: the
   * default of `spend/refusal-row-quota.ts` (600).
   */
  GATEWAY_REFUSAL_ROWS_PER_KEY_PER_MINUTE: z.coerce.number().int().nonnegative().optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  DEFAULT_USER_BUDGET: z.coerce.number().nonnegative().default(10),
  DEFAULT_BUDGET_DURATION: z.string().default("30d"),
  DEFAULT_TPM_LIMIT: int(10000),
  DEFAULT_RPM_LIMIT: int(60),
  /** The chat's service key (a virtual key the gateway ensures at start-up; see keys/service-key.ts). */
  CHAT_SERVICE_KEY: optionalString.refine(
    (v) => v === undefined || (v.startsWith("sk-") && v.length >= 20 && v.length <= 256),
    { message: "must start with sk- and be 20 to 256 characters long" },
  ),
  /** Gateway processes serving the port: a positive integer, or `auto` for one per core the container has. */
  GATEWAY_WORKERS: z
    .string()
    .default("1")
    .transform((value, ctx) => {
      const trimmed = value.trim();
      if (trimmed === "") return 1;
      if (trimmed === "auto") return availableParallelism();
      if (/^[1-9][0-9]{0,3}$/.test(trimmed)) return Number(trimmed);
      ctx.addIssue({
        code: "custom",
        message: `must be a positive integer (at most 9999) or auto, got "${value}"`,
      });
      return z.NEVER;
    }),
  /** Invalid keys per client address per minute before its unknown keys get 429; 0 = no limit. */
  GATEWAY_AUTH_FAILURE_LIMIT: int(20),
  /**
   * Days the audit log keeps its rows (older ones are deleted hourly); at least 30, the floor the database
   * enforces (AUDIT_MIN_RETENTION_DAYS, audit/query.ts).
   */
  AUDIT_LOG_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(30, "must be at least 30: the database refuses to delete an audit row younger than 30 days")
    .default(365),
  /** Bearer token GET /metrics requires (Prometheus sends it); unset = /metrics needs no token. */
  METRICS_TOKEN: optionalString,
  /** Reverse proxies (addresses or CIDRs, comma-separated) whose X-Forwarded-For names the client. */
  GATEWAY_TRUSTED_PROXIES: optionalString,
  /** Public URL of the key console; GET /ui redirects to its admin sign-in. */
  CONSOLE_PUBLIC_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  BUDGET_WEBHOOK_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
});

/** Validated gateway settings. Sizes in bytes, times in ms, budgets in USD. */
export interface GatewayEnv {
  port: number;
  host: string;
  /** Absolute or cwd-relative path of litellm/config.yaml. */
  configPath: string;
  policyPath: string;
  /** GATEWAY_MASTER_KEY; undefined when unset or still the `replace-me` placeholder. */
  masterKey: string | undefined;
  databaseUrl: string | undefined;
  /**
   * Absolute folder of the embedded database (GATEWAY_EMBEDDED_DB), used only when `databaseUrl` is undefined
   * (`db/embedded.ts`); undefined = none, the admin API then answers 501.
   */
  embeddedDbDir: string | undefined;
  redisUrl: string | undefined;
  /** GATEWAY_REDIS_KEY_PREFIX, default `gw:`. */
  redisKeyPrefix: string;
  maxBodyBytes: number;
  shutdownTimeoutMs: number;
  /** Absolute folder of the spend spool (GATEWAY_SPOOL_DIR). */
  spoolDir: string;
  /**
   * GATEWAY_RUN_MIGRATIONS (default true): start-up applies pending migrations; false: it refuses to start while
   * any is pending (they are run once per rollout instead).
   */
  runMigrations: boolean;
  /** The longest a stream may run, ms; 0: no limit. */
  maxStreamDurationMs: number;
  /** Refusal rows a key may add per minute on this instance (`spend/refusal-row-quota.ts`); undefined: its default. */
  refusalRowsPerKeyPerMinute: number | undefined;
  /** Client connection timeouts, ms; see {@link ServerTimeouts}. */
  timeouts: ServerTimeouts;
  logLevel: string;
  /** Trace export to Langfuse (`TRACE_*`, or `LANGFUSE_*`); undefined when not configured. */
  trace: TraceSettings | undefined;
  /** Defaults for users provisioned without explicit limits (DEFAULT_USER_BUDGET, DEFAULT_BUDGET_DURATION, …). */
  userDefaults: { maxBudget: number; budgetDuration: string; tpmLimit: number; rpmLimit: number };
  /** CHAT_SERVICE_KEY: the chat's service key, ensured at start-up when a database is configured. */
  chatServiceKey: string | undefined;
  /**
   * GATEWAY_WORKERS resolved to a count (≥ 1; `auto` = `os.availableParallelism()`): 1 runs the gateway in this
   * process; more starts a cluster primary that forks that many gateway processes on the same port
   * (`cluster/primary.ts`).
   */
  workers: number;
  /** CONSOLE_PUBLIC_URL without a trailing slash, e.g. `https://console.example.com`; GET /ui redirects there. */
  consolePublicUrl: string | undefined;
  /** BUDGET_WEBHOOK_URL: where budget warnings are POSTed (e.g. a Slack incoming webhook); undefined = not sent. */
  budgetWebhookUrl: string | undefined;
  /** GATEWAY_AUTH_FAILURE_LIMIT: invalid keys per client address per minute (default 20); 0 = no limit. */
  authFailureLimit: number;
  /** AUDIT_LOG_RETENTION_DAYS: days audit rows are kept (default 365). */
  auditRetentionDays: number;
  /** METRICS_TOKEN: the bearer token GET /metrics requires; undefined = none. */
  metricsToken: string | undefined;
  /** GATEWAY_TRUSTED_PROXIES: fastify's `trustProxy` (comma-separated addresses or CIDRs); undefined = none. */
  trustedProxies: string | undefined;
}

/** How long the gateway waits on its clients, ms; 0 turns a timeout off. */
export interface ServerTimeouts {
  /** Headers and body must have arrived within this (a slow-body client is answered 408 and cut). */
  requestMs: number;
  /** Headers must have arrived within this (at most `requestMs` when that is set). */
  headersMs: number;
  /** Idle time allowed between two requests on a kept-alive connection. */
  keepAliveMs: number;
  /** Inactivity (no bytes either way) after which a connection is closed, streams included. */
  connectionMs: number;
}

/** Raised for an invalid environment; the message names each variable and what is wrong. */
export class EnvError extends Error {
  override name = "EnvError";
}

/**
 * Reads the gateway's settings from an environment map.
 * @throws EnvError naming every invalid variable; TraceSettingsError for invalid `TRACE_*` settings.
 */
export function readEnv(source: NodeJS.ProcessEnv = process.env): GatewayEnv {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new EnvError(`invalid environment:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  // `npm run dev` runs in services/gateway; a relative path means one relative to where npm was invoked.
  const base = source.INIT_CWD ?? process.cwd();
  const fromBase = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  return {
    port: e.PORT,
    host: e.HOST,
    configPath: fromBase(e.GATEWAY_CONFIG),
    policyPath: fromBase(e.GUARDRAIL_POLICY),
    masterKey: e.GATEWAY_MASTER_KEY,
    databaseUrl: e.DATABASE_URL,
    embeddedDbDir: e.GATEWAY_EMBEDDED_DB === undefined ? undefined : fromBase(e.GATEWAY_EMBEDDED_DB),
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.GATEWAY_REDIS_KEY_PREFIX,
    maxBodyBytes: Math.round(e.GATEWAY_MAX_REQUEST_SIZE_MB * 1024 * 1024),
    shutdownTimeoutMs: e.GATEWAY_SHUTDOWN_TIMEOUT_MS,
    spoolDir: fromBase(e.GATEWAY_SPOOL_DIR),
    runMigrations: e.GATEWAY_RUN_MIGRATIONS,
    maxStreamDurationMs: e.GATEWAY_MAX_STREAM_DURATION_MS,
    refusalRowsPerKeyPerMinute: e.GATEWAY_REFUSAL_ROWS_PER_KEY_PER_MINUTE,
    timeouts: {
      requestMs: e.GATEWAY_REQUEST_TIMEOUT_MS,
      headersMs:
        e.GATEWAY_REQUEST_TIMEOUT_MS > 0
          ? Math.min(e.GATEWAY_HEADERS_TIMEOUT_MS, e.GATEWAY_REQUEST_TIMEOUT_MS)
          : e.GATEWAY_HEADERS_TIMEOUT_MS,
      keepAliveMs: e.GATEWAY_KEEP_ALIVE_TIMEOUT_MS,
      connectionMs: e.GATEWAY_CONNECTION_TIMEOUT_MS,
    },
    logLevel: e.LOG_LEVEL,
    trace: readTraceSettings(source),
    userDefaults: {
      maxBudget: e.DEFAULT_USER_BUDGET,
      budgetDuration: e.DEFAULT_BUDGET_DURATION,
      tpmLimit: e.DEFAULT_TPM_LIMIT,
      rpmLimit: e.DEFAULT_RPM_LIMIT,
    },
    chatServiceKey: e.CHAT_SERVICE_KEY,
    workers: e.GATEWAY_WORKERS,
    consolePublicUrl: e.CONSOLE_PUBLIC_URL?.replace(/\/+$/, ""),
    budgetWebhookUrl: e.BUDGET_WEBHOOK_URL,
    authFailureLimit: e.GATEWAY_AUTH_FAILURE_LIMIT,
    trustedProxies: e.GATEWAY_TRUSTED_PROXIES,
    metricsToken: e.METRICS_TOKEN,
    auditRetentionDays: e.AUDIT_LOG_RETENTION_DAYS,
  };
}
