/**
 * Builds the scanner's fastify app from its dependencies (no listening, no model loading): routes and the
 * error handling that turns every failure into an OpenAI-shaped error body. `server.ts` starts it.
 */
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
} from "fastify";
import { ScannerError } from "./errors/scanner-error.js";
import type { ScannerMetrics } from "./metrics/metrics.js";
import type { ModelSlot } from "./model/model-slot.js";
import { healthRoutes } from "./routes/health.js";
import { metricsRoutes } from "./routes/metrics.js";
import { scanRoutes } from "./routes/scan.js";

/** What the app is built from. */
export interface AppDeps {
  /** The model, loaded or still loading. */
  slot: ModelSlot;
  metrics: ScannerMetrics;
  /** SCANNER_MAX_CHARS: longest `text`, characters. */
  maxChars: number;
  /** fastify's `logger` option (false in tests). */
  logger?: FastifyServerOptions["logger"];
}

/**
 * The largest body that can carry `maxChars` characters as JSON: 6 bytes per character covers `\uXXXX`
 * escapes, plus room for the braces and key. Bigger bodies get the same 413 as a long text.
 */
export function bodyLimitFor(maxChars: number): number {
  return maxChars * 6 + 1024;
}

/** Maps fastify's own client errors (bad JSON, body too large, …) to OpenAI-shaped ones. */
function fromFastifyError(error: FastifyError, maxChars: number): ScannerError | undefined {
  if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return new ScannerError(
      413,
      `The request body is too large: text may have at most ${maxChars} characters (SCANNER_MAX_CHARS).`,
      {
        type: "invalid_request_error",
        param: "text",
        code: "request_too_large",
      },
    );
  }
  if (error.code === "FST_ERR_CTP_EMPTY_JSON_BODY") {
    return new ScannerError(400, 'The request body is empty; send {"text": string}.', {
      type: "invalid_request_error",
    });
  }
  if (error instanceof SyntaxError || error.code === "FST_ERR_CTP_INVALID_JSON_BODY") {
    return new ScannerError(400, `Malformed JSON in the request body: ${error.message}`, {
      type: "invalid_request_error",
      code: "invalid_json",
    });
  }
  if (error.statusCode !== undefined && error.statusCode < 500) {
    return new ScannerError(error.statusCode, error.message, { type: "invalid_request_error" });
  }
  return undefined;
}

/** Creates the app. */
export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: bodyLimitFor(deps.maxChars),
    return503OnClosing: true,
    // Request lines are not logged (texts are the client's data); errors are.
    logController: new LogController({ disableRequestLogging: true }),
  });

  // Clients that forget Content-Type (curl -d, fetch with a string body) still send JSON: parse any body as JSON.
  app.removeContentTypeParser("text/plain");
  app.addContentTypeParser("*", { parseAs: "string" }, app.getDefaultJsonParser("error", "ignore"));

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = error instanceof ScannerError ? error : fromFastifyError(error, deps.maxChars);
    if (known === undefined) request.log.error({ err: error, requestId: request.id }, "unhandled error");
    const out =
      known ??
      new ScannerError(500, `Internal error in the scanner (request id ${request.id}).`, {
        type: "internal_error",
      });
    return reply.code(out.status).send(out.toBody());
  });
  app.setNotFoundHandler((request, reply) => {
    const error = new ScannerError(404, `No route ${request.method} ${request.url.split("?")[0]}.`, {
      type: "invalid_request_error",
      code: "not_found",
    });
    return reply.code(404).send(error.toBody());
  });

  app.register(healthRoutes, { slot: deps.slot });
  app.register(metricsRoutes, { registry: deps.metrics.registry });
  app.register(scanRoutes, { slot: deps.slot, metrics: deps.metrics, maxChars: deps.maxChars });
  return app;
}
