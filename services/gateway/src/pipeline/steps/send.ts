/**
 * Send step: the upstream call through the router (retries, fallbacks, cooldowns), aborted when the client
 * leaves. The endpoint says which upstream API gets which body; the client's JSON text goes upstream in place
 * of the serialised body whenever it can (`providers/openai-compatible/forward-json.ts`).
 */
import type { UpstreamApi } from "../../providers/index.js";
import type { ForwardableJson } from "../../providers/openai-compatible/forward-json.js";
import type { Router, UpstreamResponse } from "../../router/router.js";
import type { CallContext } from "../types.js";

/** What goes upstream: the API, the body for it, and the client's text when it can stand for that body. */
export interface UpstreamCall {
  api: UpstreamApi;
  body: Record<string, unknown>;
  json?: ForwardableJson | undefined;
}

/**
 * Sends `upstream` for `call`'s alias; sets and returns `call.upstream`.
 * @throws GatewayError the router's mapped upstream failure (502/504/…), or the abort reason if the client left.
 */
export async function send(
  call: CallContext,
  router: Router,
  upstream: UpstreamCall,
): Promise<UpstreamResponse> {
  call.upstream = await router.send(call.body.model, upstream.body, call.abort, {
    api: upstream.api,
    estimatedTokens: call.promptEstimate + call.completionEstimate,
    ...(call.route === undefined ? {} : { aliases: call.route.aliases }),
    ...(upstream.json === undefined ? {} : { json: upstream.json }),
  });
  return call.upstream;
}
