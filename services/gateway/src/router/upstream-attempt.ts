/**
 * One attempt of a routed call: the body sent to one deployment through its provider's adapter, and what came
 * back, either a 2xx answer whose body is still unread (a stream's once its first chunk is there, so a stream
 * that never starts counts as failed and is retried elsewhere) or the failure the router's retry decision reads
 * (`upstream-error.ts`). The router (`router.ts`) chooses the deployment, the timeout and whether to try again.
 */
import { once } from "node:events";
import type { Agent, Dispatcher } from "undici";
import { errors as undiciErrors } from "undici";
import type { Deployment } from "../config/types.js";
import { adapterFor, type UpstreamApi } from "../providers/index.js";
import { type ForwardableJson, upstreamJson } from "../providers/openai-compatible/forward-json.js";
import type { UpstreamAnswer } from "../providers/types.js";
import { type AbortSource, abortSignalOf } from "./call-abort.js";
import { type AttemptFailure, redact, upstreamMessage } from "./upstream-error.js";

/** What one attempt sends: the body, its JSON text when the client's can be forwarded, and how to wait. */
export interface Attempt {
  deployment: Deployment;
  /** The body; `model` is replaced by the deployment's upstream model. */
  body: Record<string, unknown>;
  /** The client's JSON text for `body`, sent with the model spliced in instead of serialising `body`. */
  json: ForwardableJson | undefined;
  /** A stream: the attempt succeeds once the first chunk is there. */
  stream: boolean;
  api: UpstreamApi;
  /** The longest wait for the headers and for each piece of the body, ms. */
  timeoutMs: number;
}

/** `retry-after` in seconds, when the upstream sent a non-negative number. */
function retryAfterSeconds(headers: Dispatcher.ResponseData["headers"]): number | undefined {
  const value = headers["retry-after"];
  const n = Number(Array.isArray(value) ? value[0] : value);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * Sends `attempt` through `agent`: the 2xx answer (translated by the provider's adapter when it translates), or
 * the failure (an error status with the upstream's message, the deployment's key redacted; a timeout; a
 * connection error).
 * @throws the signal's reason when `signal` aborts.
 */
export async function sendAttempt(
  agent: Agent,
  attempt: Attempt,
  signal: AbortSource,
): Promise<UpstreamAnswer | AttemptFailure> {
  const { deployment, body, json, stream, api, timeoutMs } = attempt;
  const model = deployment.upstreamModel;
  const text = json === undefined ? JSON.stringify({ ...body, model }) : upstreamJson(json, model);
  const adapter = adapterFor(deployment.provider);
  const request = adapter.request(api, deployment, text);
  const target = `${deployment.provider}/${deployment.upstreamModel}`;
  try {
    const response = await agent.request({
      origin: request.origin,
      path: request.path,
      method: "POST",
      headers: request.headers,
      body: request.body,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    if (response.statusCode >= 200 && response.statusCode < 300) {
      // A stream counts as started once its first chunk is there: one that never starts is retried.
      if (stream) await once(response.body, "readable", { signal: abortSignalOf(signal) });
      const answer = { statusCode: response.statusCode, headers: response.headers, body: response.body };
      return request.translateAnswer === undefined ? answer : request.translateAnswer(answer);
    }
    const text = await response.body.text().catch(() => "");
    return {
      kind: "status",
      status: response.statusCode,
      message: redact(adapter.errorMessage?.(text) ?? upstreamMessage(text), [deployment.apiKey]),
      retryAfterSeconds: retryAfterSeconds(response.headers),
      target,
    };
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    const timedOut =
      error instanceof undiciErrors.HeadersTimeoutError ||
      error instanceof undiciErrors.BodyTimeoutError ||
      error instanceof undiciErrors.ConnectTimeoutError;
    const code = (error as { code?: string }).code ?? (error as Error).name;
    return {
      kind: timedOut ? "timeout" : "connection",
      message: redact(`${code}`, [deployment.apiKey]),
      target,
    };
  }
}
