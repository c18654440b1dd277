/**
 * OpenAI-shaped errors. Every error the gateway returns has the body
 * `{"error":{"message","type","param","code"}}` (OpenAI API reference, "Error codes"; LiteLLM uses the same
 * shape with `code` set to the HTTP status as a string).
 */

/** The JSON body of every error response. */
export interface OpenAIErrorBody {
  error: {
    message: string;
    type: string;
    param: string | null;
    code: string;
  };
}

/** Options for {@link GatewayError}. */
export interface GatewayErrorOptions {
  /** OpenAI error `type`, e.g. `invalid_request_error`, `authentication_error`, `rate_limit_error`, `budget_exceeded`. */
  type: string;
  /** The request field the error is about (`model`, `messages[0].content`), or null. */
  param?: string | null;
  /** Machine-readable `code`; defaults to the HTTP status as a string (LiteLLM's convention). */
  code?: string;
  /** Extra response headers, e.g. `retry-after` (seconds) on 429. */
  headers?: Record<string, string>;
  /**
   * Why the call was refused, as its spend-log row records it (`reason`); defaults to `type`. Set where the type
   * is generic: `guardrail_violation` (a guardrail's 400), `key_model_access_denied` (a 403 `permission_error`).
   */
  reason?: string;
  cause?: unknown;
}

/**
 * An error the gateway answers with; `status` is the HTTP status. Thrown anywhere on the request path and
 * turned into an OpenAI-shaped response by the error handler. Messages must never contain a key or secret.
 */
export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly code: string;
  readonly headers: Record<string, string>;
  /** The spend log's `reason` for this refusal: {@link GatewayErrorOptions.reason}, else `type`. */
  readonly reason: string;

  constructor(status: number, message: string, options: GatewayErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "GatewayError";
    this.status = status;
    this.type = options.type;
    this.param = options.param ?? null;
    this.code = options.code ?? String(status);
    this.headers = options.headers ?? {};
    this.reason = options.reason ?? options.type;
  }

  /** The response body for this error. */
  toBody(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** 400 `invalid_request_error` about one request field. */
export function invalidRequest(message: string, param: string | null = null): GatewayError {
  return new GatewayError(400, message, { type: "invalid_request_error", param });
}
