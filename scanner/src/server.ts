/**
 * Starts the scanner: reads the environment, listens at once (GET /health answers 503), then downloads the
 * model's missing files into SCANNER_MODEL_DIR and loads it (/health turns 200). A model that cannot be
 * fetched or loaded prints one clear message and exits with status 1; the container restarts it and the
 * download resumes where it stopped.
 */
import { buildApp } from "./app.js";
import { readEnv } from "./config/env.js";
import { createMetrics } from "./metrics/metrics.js";
import { loadClassifier } from "./model/classifier.js";
import { ensureModelFiles } from "./model/download.js";
import { ModelSlot } from "./model/model-slot.js";

async function main(): Promise<void> {
  const env = readEnv();
  const metrics = createMetrics({ defaults: true });
  const slot = new ModelSlot(env.model, metrics);
  const app = buildApp({ slot, metrics, maxChars: env.maxChars, logger: { level: env.logLevel } });
  const log = app.log;

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, "shutting down");
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));

  const address = await app.listen({ port: env.port, host: env.host });
  log.info({ address, model: env.model, modelDir: env.modelDir }, "scanner listening; loading the model");

  try {
    const fetched = await ensureModelFiles({
      endpoint: env.hubEndpoint,
      model: env.model,
      revision: env.revision,
      modelDir: env.modelDir,
      token: env.hubToken,
      attempts: env.downloadAttempts,
      log: (line) => log.info(line),
    });
    if (fetched.length > 0) log.info({ files: fetched }, "model downloaded");
    const started = performance.now();
    const classifier = await loadClassifier({
      modelDir: env.modelDir,
      model: env.model,
      windowTokens: env.windowTokens,
      windowOverlap: env.windowOverlap,
      batchWindows: env.batchWindows,
    });
    slot.ready(classifier);
    log.info(
      {
        model: env.model,
        loadMs: Math.round(performance.now() - started),
        windowTokens: classifier.windowTokens,
        windowOverlap: classifier.windowOverlap,
      },
      "model loaded; scanning",
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    slot.fail(message);
    log.error(`cannot load model ${env.model}: ${message}`);
    await app.close();
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`scanner: cannot start: ${message}\n`);
  process.exit(1);
});
