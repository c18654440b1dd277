/**
 * `POST /v1/messages/count_tokens` (Anthropic API reference, "Count Message tokens"): the body (a Messages
 * request without `max_tokens`) is validated, its model resolved and checked against the key's `models`, then
 * passed through to the alias's Anthropic deployment (`POST {api_base}/messages/count_tokens`, through the
 * router: retries, fallbacks, timeouts) and its answer, `{"input_tokens": N}`, returned as it came. Free
 * upstream, so nothing is reserved or booked: no rate-limit count, no spend row, no request counter.
 *
 * Only an Anthropic deployment can count its own tokens: an alias with any other deployment (fallbacks included)
 * gets a 400 in Anthropic's shape saying so; an estimate is not what Anthropic returns.
 */
import type { FastifyInstance } from "fastify";
import { GatewayError } from "../../errors/gateway-error.js";
import { authorizeModel } from "../../pipeline/steps/authorize.js";
import { unknownModel } from "../../pipeline/steps/resolve.js";
import type { Router } from "../../router/router.js";
import { servedNatively } from "./index.js";
import { parseCountTokensRequest } from "./schema.js";

/** 400 for an alias that is not served by Anthropic deployments only. */
const notCounted = (model: string) =>
  new GatewayError(
    400,
    `Token counting (count_tokens) is served only for models whose deployments are all Anthropic's (anthropic/…); model=${model} is not. Send the request to /v1/messages and read usage.input_tokens instead.`,
    { type: "invalid_request_error", param: "model" },
  );

/**
 * Registers the route.
 * @throws GatewayError (answered in Anthropic's shape) 400 for a bad body, an unknown model or one not served by
 *   Anthropic; 403 when the key may not use the model; the router's mapped upstream failure.
 */
export function countTokensRoute(app: FastifyInstance, router: Router): void {
  app.post(
    "/v1/messages/count_tokens",
    { config: { errorFormat: "anthropic", apiKeyHeader: true } },
    async (request, reply) => {
      const body = parseCountTokensRequest(request.body);
      if (router.deployments(body.model) === undefined) throw unknownModel(body.model);
      if (request.auth !== undefined) authorizeModel(request.auth, body.model);
      if (!servedNatively(router, body.model, "messages/count_tokens")) throw notCounted(body.model);
      const abort = new AbortController();
      reply.raw.once("close", () => {
        if (!reply.raw.writableFinished) abort.abort(new Error("client disconnected"));
      });
      const upstream = await router.send(body.model, body, abort.signal, {
        api: "messages/count_tokens",
        estimatedTokens: 0,
      });
      const text = await upstream.body.text();
      router.recordUsage(upstream, 0);
      return reply
        .header("content-type", "application/json")
        .header("x-litellm-model-id", upstream.deployment.id)
        .send(text);
    },
  );
}
