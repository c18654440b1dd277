/**
 * Starts the gateway: reads the environment, assembles it, listens, and shuts down gracefully on SIGTERM or
 * SIGINT (stop accepting, finish in-flight requests and streams within GATEWAY_SHUTDOWN_TIMEOUT_MS, flush
 * spend). Start-up problems (bad config, missing key, unreachable database) print one clear message and
 * exit with status 1.
 */
import { config as loadDotenv } from "dotenv";
import { readEnv, repoRoot } from "./config/env.js";
import { createGateway } from "./gateway.js";

async function main(): Promise<void> {
  // Run from source, the gateway reads the operator's .env at the repository root (the same file the stack reads);
  // variables already set in the environment win. In the image there is no such file.
  loadDotenv({ path: `${repoRoot}.env`, quiet: true });
  const env = readEnv();
  const gateway = await createGateway(env);
  const log = gateway.app.log;
  if (env.masterKey === undefined) {
    log.warn("GATEWAY_MASTER_KEY is not set: only virtual keys are accepted and the admin API is closed.");
  }
  if (env.chatServiceKey !== undefined && env.databaseUrl === undefined) {
    log.warn(
      "CHAT_SERVICE_KEY is set but DATABASE_URL is not: the chat's service key cannot exist, its calls get 401.",
    );
  }
  let signals = 0;
  const stop = (signal: string) => {
    signals++;
    if (signals > 1) {
      log.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    log.info({ signal, timeoutMs: env.shutdownTimeoutMs }, "shutting down: finishing in-flight requests");
    gateway.shutdown(env.shutdownTimeoutMs).then(
      () => {
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
  process.on("SIGINT", () => stop("SIGINT"));

  const address = await gateway.app.listen({ port: env.port, host: env.host });
  const models = gateway.router.models().map((m) => m.id);
  log.info(
    { address, config: env.configPath, models },
    models.length === 0
      ? "gateway listening; no model registered yet (add one to litellm/config.yaml)"
      : "gateway listening",
  );
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`gateway: cannot start: ${message}\n`);
  process.exit(1);
});
