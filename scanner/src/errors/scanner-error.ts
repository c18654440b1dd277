/**
 * OpenAI-shaped errors: every error the scanner answers has the body `{"error":{"message","type","param","code"}}`
 * (OpenAI API reference, "Error codes"), the same shape as the gateway's.
 */

/** The JSON body of every error response. */
export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

/** An error answered with HTTP `status`; thrown on the request path and rendered by the app's error handler. */
export class ScannerError extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly code: string;

  constructor(
    status: number,
    message: string,
    options: { type: string; param?: string | null; code?: string },
  ) {
    super(message);
    this.name = "ScannerError";
    this.status = status;
    this.type = options.type;
    this.param = options.param ?? null;
    this.code = options.code ?? String(status);
  }

  /** The response body for this error. */
  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}
