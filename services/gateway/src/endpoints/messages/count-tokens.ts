/**
 * `POST /v1/messages/count_tokens` (Anthropic API reference, "Count Message tokens") on the pipeline, like any
 * model endpoint: the body (a Messages request without `max_tokens`) is validated, its model resolved and checked
 * against the key's `models`, the call admitted (the key's and user's `rpm_limit` count it; a spent budget
 * refuses it with the same 429 as a model call), the input guardrails read the same texts as on `/v1/messages`
 * (a blocked card number never reaches the upstream), then it is passed through to the alias's Anthropic
 * deployment (`POST {api_base}/messages/count_tokens`, through the router: retries, fallbacks, timeouts) and
 * its answer, `{"input_tokens": N}`, returned as it came.
 *
 * Counting is free upstream (`free`): admission reserves 0 USD and is settled at 0 USD and 0 tokens, and no spend
 * row is written; the request counters count it (route `/v1/messages/count_tokens`).
 *
 * Only an Anthropic deployment can count its own tokens: an alias with any other deployment (fallbacks included)
 * gets a 400 in Anthropic's shape saying so; an estimate is not what Anthropic returns.
 */
import { formatCost } from "../../accounting/call-accounting.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Endpoint } from "../../pipeline/endpoint.js";
import { decisionHeaders } from "../../pipeline/steps/decision-headers.js";
import { servesNatively } from "../../pipeline/steps/native-api.js";
import { send } from "../../pipeline/steps/send.js";
import { messagesInput } from "./index.js";
import { type MessagesRequest, parseCountTokensRequest } from "./schema.js";
import { messagesRequestTexts } from "./texts.js";

/** 400 for an alias that is not served by Anthropic deployments only. */
const notCounted = (model: string) =>
  new GatewayError(
    400,
    `Token counting (count_tokens) is served only for models whose deployments are all Anthropic's (anthropic/…); model=${model} is not. Send the request to /v1/messages and read usage.input_tokens instead.`,
    { type: "invalid_request_error", param: "model" },
  );

/**
 * The count_tokens endpoint.
 * @throws GatewayError (answered in Anthropic's shape) 400 for a bad body, an unknown model or one not served by
 *   Anthropic; 403 when the key may not use the model; 429 from the limits; the guardrail's block; the
 *   router's mapped upstream failure.
 */
export const countTokens: Endpoint<MessagesRequest> = {
  paths: ["/v1/messages/count_tokens"],
  callType: "count_tokens",
  routeConfig: { errorFormat: "anthropic", apiKeyHeader: true },
  parse: parseCountTokensRequest,
  clientInput: messagesInput,
  isStream: () => false,
  // Free upstream: nothing is reserved or booked; rate limits count it, and a spent budget refuses it.
  free: true,
  output: () => ({ cap: 0, choices: 1 }),
  inputTexts: messagesRequestTexts,
  precheck(call) {
    if (!servesNatively(call, "messages/count_tokens")) throw notCounted(call.body.model);
  },
  send(call, deps) {
    return send(call, deps.router, { api: "messages/count_tokens", body: call.body });
  },
  async answer(call, upstream, deps, _request, reply) {
    const text = await upstream.body.text();
    call.firstByteAtEpoch = deps.clock.now();
    // Free: no tokens for the deployment's tpm, nothing spent on the budgets (the rpm count stays).
    deps.router.recordUsage(upstream, 0);
    call.admission?.settle({ cost: 0, totalTokens: 0 });
    return reply
      .header("content-type", "application/json")
      .header("x-litellm-response-cost", formatCost(0))
      .header("x-litellm-model-id", upstream.deployment.id)
      .headers(decisionHeaders(call.decisions))
      .send(text);
  },
};
