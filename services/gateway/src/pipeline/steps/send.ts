/**
 * Send step: the upstream call through the router (retries, fallbacks, cooldowns), aborted when the client
 * leaves. The endpoint says which upstream API gets which body; the client's JSON text goes upstream in place
 * of the serialised body whenever it can (`providers/openai-compatible/forward-json.ts`).
 */
import type { UpstreamApi } from "../../providers/index.js";
import { type ForwardableJson, forwardable } from "../../providers/openai-compatible/forward-json.js";
import type { Router, UpstreamResponse } from "../../router/router.js";
import type { CallContext } from "../types.js";

/** What goes upstream: the API, the body for it, and the client's text when it can stand for that body. */
export interface UpstreamCall {
  api: UpstreamApi;
  body: Record<string, unknown>;
  json?: ForwardableJson | undefined;
}

/**
 * The upstream call of an endpoint that forwards the client's body in its own API (chat, text completions,
 * native Responses): the body with the output cap the reservation adds, under `capField` (`cost/reservation.ts`),
 * and for a stream whose API reports usage only when asked (`askUsage`: chat and text completions)
 * `stream_options.include_usage`; as the client's own JSON text whenever that can stand for it
 * (`forward-json.ts`), serialised otherwise.
 */
export function forwardedCall(
  call: CallContext,
  api: UpstreamApi,
  capField: string,
  askUsage: boolean,
): UpstreamCall {
  const { body } = call;
  const cap = call.reservation?.cap?.tokens;
  const usage = askUsage && call.stream;
  const added = cap === undefined ? undefined : { name: capField, value: cap };
  const json = call.json === undefined ? undefined : forwardable(call.json, body, usage, added);
  if (json !== undefined || (cap === undefined && !usage)) return { api, body, json };
  const copy: Record<string, unknown> = { ...body };
  if (cap !== undefined) copy[capField] = cap;
  if (usage) copy.stream_options = { ...(body.stream_options as object | undefined), include_usage: true };
  return { api, body: copy };
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
    ...(call.route?.only === undefined ? {} : { only: call.route.only }),
    // A JSON call's answer is read by `answerJson`, which assembles it when it went upstream as a stream.
    assemble: !call.stream,
    ...(upstream.json === undefined ? {} : { json: upstream.json }),
  });
  return call.upstream;
}
