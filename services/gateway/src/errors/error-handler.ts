/**
 * The gateway's error handler: every error a route throws becomes an OpenAI-shaped error body
 * (`{error: {message, type, param, code}}`, OpenAI API reference, "Error codes") with its status and headers.
 * A route whose config says `errorFormat: "anthropic"` gets the same error in Anthropic's shape instead.
 * Fastify's own client errors (bad JSON, body too large, wrong media type, validation) become 4xx; anything else is
 * logged and answered 500 `internal_error` naming the request id, never the error's text.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { toAnthropicBody } from "./anthropic-error.js";
import { GatewayError } from "./gateway-error.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * The error body's shape on this route: OpenAI's (default) or Anthropic's (`errors/anthropic-error.ts`), for
     * the routes of Anthropic's API.
     */
    errorFormat?: "openai" | "anthropic";
  }
}

/** Maps fastify's own client errors (bad JSON, body too large, …) to OpenAI-shaped ones. */
function fromFastifyError(error: FastifyError, maxBodyBytes: number): GatewayError | undefined {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new GatewayError(
        413,
        `Request body is larger than the gateway's limit of ${(maxBodyBytes / 1024 / 1024).toFixed(1)} MB (GATEWAY_MAX_REQUEST_SIZE_MB).`,
        { type: "invalid_request_error", code: "request_too_large" },
      );
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new GatewayError(400, "The request body is empty; send a JSON object.", {
        type: "invalid_request_error",
      });
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new GatewayError(415, "Unsupported Content-Type; send application/json.", {
        type: "invalid_request_error",
      });
  }
  if (error instanceof SyntaxError || error.code === "FST_ERR_CTP_INVALID_JSON_BODY") {
    return new GatewayError(400, `Malformed JSON in the request body: ${error.message}`, {
      type: "invalid_request_error",
      code: "invalid_json",
    });
  }
  if (error.validation !== undefined || (error.statusCode !== undefined && error.statusCode < 500)) {
    return new GatewayError(error.statusCode ?? 400, error.message, { type: "invalid_request_error" });
  }
  return undefined;
}

/**
 * The handler for `app.setErrorHandler`, for a body limit of `maxBodyBytes` (bytes, named in the 413 message).
 * Sets `request.errorType` (the OpenAI error `type`) for the metrics and `request.errorReason` for the spend log.
 */
export function gatewayErrorHandler(maxBodyBytes: number) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const known = error instanceof GatewayError ? error : fromFastifyError(error, maxBodyBytes);
    if (known === undefined) {
      request.log.error({ err: error, requestId: request.id }, "unhandled error");
    }
    const out =
      known ??
      new GatewayError(500, `Internal error in the gateway (request id ${request.id}).`, {
        type: "internal_error",
      });
    request.errorType = out.type;
    request.errorReason = out.reason;
    if (out.status >= 500)
      request.log.warn({ status: out.status, type: out.type, requestId: request.id }, out.message);
    const body =
      request.routeOptions.config?.errorFormat === "anthropic" ? toAnthropicBody(out) : out.toBody();
    return reply.code(out.status).headers(out.headers).send(body);
  };
}
