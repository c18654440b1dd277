/**
 * A request on an upstream resource at one known deployment, outside the model-call path: no routing, retries,
 * fallbacks or rate counting (the resource lives on that deployment only, e.g. a response OpenAI stored, read
 * with `GET {api_base}/responses/{id}`). The provider adapter builds the URL base and the headers (the
 * deployment's key), so the upstream key is added as for a model call and never shown to the client.
 */
import type { Agent, Dispatcher } from "undici";
import type { Deployment } from "../config/types.js";
import { GatewayError } from "../errors/gateway-error.js";
import { adapterFor, type UpstreamApi } from "../providers/index.js";
import { redact } from "./upstream-error.js";

/** One request on a resource under an upstream API. */
export interface ResourceRequest {
  method: "GET" | "POST" | "DELETE";
  /** The API whose base path the resource is under, e.g. `responses` for `{api_base}/responses/…`. */
  api: UpstreamApi;
  /** The path below the API's, starting with `/`, its segments already URL-encoded, e.g. `/resp_1/input_items`. */
  subpath: string;
  /** The client's query string with its `?`, or "". */
  query: string;
}

/** The upstream's answer, any status, its body not read yet. */
export interface ResourceAnswer {
  deployment: Deployment;
  statusCode: number;
  headers: Dispatcher.ResponseData["headers"];
  body: Dispatcher.ResponseData["body"];
}

/**
 * Sends `request` to `deployment` through `agent`, bounded by `timeoutMs` (headers, then each wait for data).
 * @throws GatewayError 502 `upstream_error` (504 `timeout` for a timeout) when no answer came, naming the
 *   deployment's upstream model; the signal's reason when it aborted.
 */
export async function sendResource(
  agent: Agent,
  deployment: Deployment,
  request: ResourceRequest,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<ResourceAnswer> {
  const built = adapterFor(deployment.provider).request(request.api, deployment, "");
  const { "content-type": _json, ...headers } = built.headers;
  try {
    const answer = await agent.request({
      origin: built.origin,
      path: `${built.path}${request.subpath}${request.query}`,
      method: request.method,
      headers,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    return { deployment, statusCode: answer.statusCode, headers: answer.headers, body: answer.body };
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    const code = (error as { code?: string }).code ?? (error as Error).name;
    const timedOut = /Timeout/i.test(code);
    const target = `${deployment.provider}/${deployment.upstreamModel}`;
    throw new GatewayError(
      timedOut ? 504 : 502,
      `The upstream ${target} ${timedOut ? "did not answer in time" : "could not be reached"} (${redact(code, [deployment.apiKey])}). Retry later.`,
      { type: timedOut ? "timeout" : "upstream_error" },
    );
  }
}
