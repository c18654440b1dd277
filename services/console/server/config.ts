/**
 * The console's environment, read and validated in one place. Names match what the stack passes
 * (infra/console.ts) and .env.example.
 */
import { fileURLToPath } from "node:url";
import { z } from "zod";

/** Repository root: this file sits at services/console/server/ (source) or services/console/dist/server/. */
export const repoRoot = fileURLToPath(
  new URL(import.meta.url.includes("/dist/server/") ? "../../../../" : "../../../", import.meta.url),
);

const placeholder = (v: string | undefined) =>
  v === undefined || v === "" || v === "replace-me" ? undefined : v;
const required = (what: string) =>
  z
    .string({ error: `required: ${what}` })
    .transform(placeholder)
    .refine((v) => v !== undefined, { message: `required: ${what}` })
    .transform((v) => v as string);
const int = (def: number) => z.coerce.number().int().nonnegative().default(def);
const url = (def: string) => z.url().default(def);

const envSchema = z.object({
  PORT: int(3001),
  HOST: z.string().default("0.0.0.0"),
  /** The console's own public address (cookie Secure flag, Origin check). */
  PUBLIC_URL: url("http://localhost:3001"),
  /** The chat's public address: where /unauthorized sends people to sign in. */
  CHAT_URL: url("http://localhost:3080"),
  /** The gateway as the console reaches it (admin API), without /v1. */
  GATEWAY_URL: url("http://localhost:4000"),
  /** The gateway as key holders reach it, without /v1 (filled into the snippets); default GATEWAY_URL. */
  GATEWAY_PUBLIC_URL: z
    .url()
    .optional()
    .or(z.literal("").transform(() => undefined)),
  GATEWAY_MASTER_KEY: required("the gateway's master key (sk-…), the same value the gateway has"),
  JWT_REFRESH_SECRET: required("the chat's JWT_REFRESH_SECRET (same value as the chat)"),
  /** The chat's MongoDB; unset: no chat sign-in, operators only (master key), as `npm start` runs it. */
  MONGO_URI: z.string().optional().transform(placeholder),
  ADMIN_SESSION_IDLE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(30 * 60_000),
  DEFAULT_USER_BUDGET: z.coerce.number().nonnegative().default(10),
  DEFAULT_BUDGET_DURATION: z.string().default("30d"),
  DEFAULT_TPM_LIMIT: int(10000),
  DEFAULT_RPM_LIMIT: int(60),
  /** The team (its `team_id`) a newly provisioned user joins as a member; empty: none. */
  DEFAULT_TEAM_ID: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === "" ? undefined : v)),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Sessions in Redis (shared by replicas, kept across restarts); takes precedence over DATABASE_URL. */
  REDIS_URL: z
    .string()
    .optional()
    .transform((v) => (v === "" ? undefined : v)),
  /** Sessions in Postgres (table console_sessions) when there is no REDIS_URL. */
  DATABASE_URL: z
    .string()
    .optional()
    .transform((v) => (v === "" ? undefined : v)),
});

/** Validated console settings. Times in ms, budgets in USD, limits per minute. */
export interface ConsoleConfig {
  port: number;
  host: string;
  publicUrl: string;
  chatUrl: string;
  gatewayUrl: string;
  gatewayPublicUrl: string;
  /** REDIS_URL: where sessions live when set. */
  redisUrl?: string | undefined;
  /** DATABASE_URL: where sessions live without REDIS_URL. */
  databaseUrl?: string | undefined;
  masterKey: string;
  jwtRefreshSecret: string;
  /** The chat's MongoDB (MONGO_URI), or undefined: operator-only mode (no chat sign-in). */
  mongoUri: string | undefined;
  /** A console session unused this long ends (ADMIN_SESSION_IDLE_TIMEOUT_MS). */
  idleTimeoutMs: number;
  /**
   * Limits of a user provisioned on first visit (DEFAULT_USER_BUDGET USD, DEFAULT_BUDGET_DURATION, …) and the
   * team they join as a member (DEFAULT_TEAM_ID), or null.
   */
  userDefaults: {
    maxBudget: number;
    budgetDuration: string;
    tpmLimit: number;
    rpmLimit: number;
    teamId: string | null;
  };
  logLevel: string;
}

/** Raised for an invalid environment; the message names each variable and what is wrong. */
export class ConsoleEnvError extends Error {
  override name = "ConsoleEnvError";
}

/**
 * Reads the console's settings from an environment map.
 * @throws ConsoleEnvError naming every invalid or missing variable.
 */
export function readConsoleEnv(source: NodeJS.ProcessEnv = process.env): ConsoleConfig {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConsoleEnvError(`invalid environment:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  const trim = (u: string) => u.replace(/\/+$/, "");
  return {
    port: e.PORT,
    host: e.HOST,
    publicUrl: trim(e.PUBLIC_URL),
    chatUrl: trim(e.CHAT_URL),
    gatewayUrl: trim(e.GATEWAY_URL),
    gatewayPublicUrl: trim(e.GATEWAY_PUBLIC_URL ?? e.GATEWAY_URL),
    masterKey: e.GATEWAY_MASTER_KEY,
    jwtRefreshSecret: e.JWT_REFRESH_SECRET,
    mongoUri: e.MONGO_URI,
    idleTimeoutMs: e.ADMIN_SESSION_IDLE_TIMEOUT_MS,
    userDefaults: {
      maxBudget: e.DEFAULT_USER_BUDGET,
      budgetDuration: e.DEFAULT_BUDGET_DURATION,
      tpmLimit: e.DEFAULT_TPM_LIMIT,
      rpmLimit: e.DEFAULT_RPM_LIMIT,
      teamId: e.DEFAULT_TEAM_ID ?? null,
    },
    logLevel: e.LOG_LEVEL,
    redisUrl: e.REDIS_URL,
    databaseUrl: e.DATABASE_URL,
  };
}
