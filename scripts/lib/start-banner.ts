/**
 * The lines `npm start` and `npm run dev` print before starting (scripts/dev-prepare.sh runs this with tsx):
 * the gateway's and the console's URLs, where the master key is, the database and the model config in use.
 *
 * The settings are read as the processes read them: the environment first, then the repository's `.env`
 * (scripts/lib/run-local.ts for the ports, the gateway's own `loadOperatorEnv` and `readEnv` for the database
 * and `GATEWAY_CONFIG`, so the config named is the file the gateway will load: a relative path counts from
 * where npm was invoked, `INIT_CWD`).
 */
import path from "node:path";
import { loadOperatorEnv, operatorEnvFile } from "../../services/gateway/src/config/dotenv.js";
import { EnvError, readEnv, repoRoot } from "../../services/gateway/src/config/env.js";
import { TraceSettingsError } from "../../services/gateway/src/config/trace-settings.js";

/** What the banner is drawn from. */
export interface BannerInput {
  /** The repository root (absolute, no trailing slash needed). */
  root: string;
  /** The process environment `npm start` runs in (not modified). */
  env: NodeJS.ProcessEnv;
}

/**
 * The banner's text, a blank line before and after.
 * @returns the lines joined with "\n"; when the gateway would refuse its environment, the config and database
 *   lines say so (the gateway prints the reason itself when it starts).
 */
export function startBanner({ root, env }: BannerInput): string {
  const seen: NodeJS.ProcessEnv = { ...env };
  const envFile = operatorEnvFile(`${path.resolve(root)}/`, seen);
  if (envFile !== undefined) loadOperatorEnv(envFile, seen);
  const setting = (name: string) => seen[name] || undefined;
  const port = setting("PORT") ?? "4000";
  const consolePort = setting("CONSOLE_PORT") ?? "3001";
  let database: string;
  let models: string;
  try {
    const gateway = readEnv({
      ...seen,
      GATEWAY_EMBEDDED_DB: setting("GATEWAY_EMBEDDED_DB") ?? path.join(root, ".data", "postgres"),
    });
    database =
      gateway.databaseUrl !== undefined
        ? "the Postgres server of DATABASE_URL"
        : `embedded PostgreSQL (PGlite), data in ${gateway.embeddedDbDir}`;
    const shown = path.relative(root, gateway.configPath);
    const config = shown.startsWith("..") || path.isAbsolute(shown) ? gateway.configPath : shown;
    models =
      gateway.configPath === path.join(repoRoot, "litellm", "config.yaml")
        ? `${config}; register one with ./scripts/add-model.sh --help`
        : `${config} (GATEWAY_CONFIG); register one with ./scripts/add-model.sh --config ${gateway.configPath}`;
  } catch (error) {
    if (!(error instanceof EnvError || error instanceof TraceSettingsError)) throw error;
    database = "not known: the gateway will refuse its environment (it says why when it starts)";
    models = database;
  }
  return [
    "",
    `  gateway     http://localhost:${port}   (OpenAI base URL: http://localhost:${port}/v1)`,
    `  console     http://localhost:${consolePort}   (sign in with the master key: users, their keys, spend)`,
    `  master key  GATEWAY_MASTER_KEY in ${path.join(root, ".env")}`,
    `              load it into your shell:  export "$(grep '^GATEWAY_MASTER_KEY=' .env)"`,
    `  try         curl -s localhost:${port}/v1/models -H "Authorization: Bearer $GATEWAY_MASTER_KEY"`,
    `  database    ${database}`,
    `  models      ${models}`,
    "",
  ].join("\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const { REPO_ROOT } = await import("../../infra/files.js");
  process.stdout.write(`${startBanner({ root: REPO_ROOT, env: process.env })}\n`);
}
