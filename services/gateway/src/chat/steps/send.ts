/**
 * Send step: the upstream call through the router (retries, fallbacks, cooldowns), aborted when the client
 * leaves. For a stream the gateway always asks for usage (`stream_options.include_usage`) so it can count
 * tokens; the answer step hides it again from clients that did not ask. The client's JSON text goes upstream
 * in place of the serialised body whenever it can (`forward-json.ts`).
 */
import type { Router, UpstreamResponse } from "../../router/router.js";
import type { ChatCompletionRequest } from "../../schemas/chat-completion.js";
import type { CallContext } from "../context.js";
import { forwardable } from "../forward-json.js";

/**
 * Sets and returns `call.upstream`.
 * @throws GatewayError the router's mapped upstream failure (502/504/…), or the abort reason if the client left.
 */
export async function send(call: CallContext, router: Router): Promise<UpstreamResponse> {
  const { body } = call;
  const json = call.json === undefined ? undefined : forwardable(call.json, body, call.stream);
  const upstreamBody: ChatCompletionRequest =
    call.stream && json === undefined
      ? { ...body, stream_options: { ...body.stream_options, include_usage: true } }
      : body;
  call.upstream = await router.send(body.model, upstreamBody, call.abort, {
    estimatedTokens: call.promptEstimate + call.completionEstimate,
    ...(json === undefined ? {} : { json }),
  });
  return call.upstream;
}
