/**
 * Starts the console: reads the environment (and the repository's .env when run from source), connects the
 * chat's database read-only (without MONGO_URI: operator-only mode, no chat sign-in), listens on PORT, and
 * closes cleanly on SIGTERM/SIGINT. A bad environment prints one message naming the variables and exits with
 * status 1.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AdminApiClient } from "@platform/admin-api";
import { config as loadDotenv } from "dotenv";
import { buildApp } from "./app.js";
import { readConsoleEnv, repoRoot } from "./config.js";
import { createLogger } from "./logger.js";
import { findWebRoot } from "./routes/pages.js";
import { MongoLibreChatStore } from "./session/librechat-store.js";
import { openSessionBackend } from "./session/open-backend.js";
import { OperatorOnlyStore } from "./session/operator-only-store.js";

async function main(): Promise<void> {
  loadDotenv({ path: `${repoRoot}.env`, quiet: true });
  const config = readConsoleEnv();
  const log = createLogger(config.logLevel);
  const here = fileURLToPath(new URL(".", import.meta.url));
  // From source (server/) the bundle is in ../dist/web; built (dist/server/) it is ../web.
  const webRoot = findWebRoot([join(here, here.includes("/dist/") ? "../web" : "../dist/web")]);
  if (webRoot === null) log.warn("web bundle not built: run `npm run build -w services/console`");
  const store =
    config.mongoUri === undefined ? new OperatorOnlyStore() : new MongoLibreChatStore(config.mongoUri);
  if (config.mongoUri === undefined) {
    log.info(
      "chat sessions: none (MONGO_URI not set): operator-only mode, sign in at /admin/login with the gateway's master key",
    );
  }
  const gateway = new AdminApiClient({ baseUrl: config.gatewayUrl, masterKey: config.masterKey });
  const sessionBackend = await openSessionBackend(config);
  log.info({ sessions: sessionBackend.kind }, "console sessions ready");
  if (sessionBackend.kind === "memory") {
    log.warn(
      "console sessions are kept in memory: set REDIS_URL or DATABASE_URL to keep them across restarts",
    );
  }
  const { app } = await buildApp({ config, gateway, store, webRoot, loggerInstance: log, sessionBackend });
  const stop = (signal: string) => {
    log.info({ signal }, "shutting down");
    app
      .close()
      .then(() => store.close())
      .then(() => sessionBackend.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
  const address = await app.listen({ port: config.port, host: config.host });
  log.info({ address, gateway: config.gatewayUrl, chat: config.chatUrl }, "console listening");
}

main().catch((error: unknown) => {
  process.stderr.write(`console: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
