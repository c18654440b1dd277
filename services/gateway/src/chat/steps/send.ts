/**
 * Send step: the upstream call through the router (retries, fallbacks, cooldowns), aborted when the client
 * leaves. For a stream the gateway always asks for usage (`stream_options.include_usage`) so it can count
 * tokens; the answer step hides it again from clients that did not ask.
 */
import type { Router, UpstreamResponse } from "../../router/router.js";
import type { ChatCompletionRequest } from "../../schemas/chat-completion.js";
import type { CallContext } from "../context.js";

/**
 * Sets and returns `call.upstream`.
 * @throws GatewayError the router's mapped upstream failure (502/504/…), or the abort reason if the client left.
 */
export async function send(call: CallContext, router: Router): Promise<UpstreamResponse> {
  const { body } = call;
  const upstreamBody: ChatCompletionRequest = call.stream
    ? { ...body, stream_options: { ...body.stream_options, include_usage: true } }
    : body;
  call.upstream = await router.send(body.model, upstreamBody, call.abort.signal, {
    estimatedTokens: call.promptEstimate + call.completionEstimate,
  });
  return call.upstream;
}
