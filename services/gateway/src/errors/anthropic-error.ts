/**
 * Errors in Anthropic's shape, for the routes that speak Anthropic's API (`/v1/messages`): the body
 * `{"type":"error","error":{"type","message"}}` with the same HTTP status (Anthropic API reference, "Errors").
 * The error `type` follows from the status as Anthropic's table gives it; the gateway's own finer type
 * (`budget_exceeded`, `model_not_found`, …) stays in the OpenAI-shaped answers of the other routes and in the
 * metrics.
 */
import type { GatewayError } from "./gateway-error.js";

/** An Anthropic error body. */
export type AnthropicErrorBody = {
  type: "error";
  error: { type: string; message: string };
};

/** Anthropic's error `type` for an HTTP status (Anthropic API reference, "Errors", HTTP errors table). */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
    case 415:
    case 422:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 402:
      return "billing_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 504:
      return "timeout_error";
    case 503:
    case 529:
      return "overloaded_error";
  }
  return status >= 500 ? "api_error" : "invalid_request_error";
}

/** An Anthropic error body for `status` and `message`. */
export function anthropicErrorBody(status: number, message: string): AnthropicErrorBody {
  return { type: "error", error: { type: anthropicErrorType(status), message } };
}

/** `error` as an Anthropic error body. */
export function toAnthropicBody(error: GatewayError): AnthropicErrorBody {
  return anthropicErrorBody(error.status, error.message);
}
