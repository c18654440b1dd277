/**
 * `POST /v1/messages/count_tokens` (Anthropic API reference, "Count Message tokens"): the body is validated and
 * its model resolved, then refused with a clear 400 in Anthropic's shape. A token count only the model's own
 * upstream can give; an estimate is not what Anthropic returns, and the native pass-through to Anthropic's
 * `/v1/messages/count_tokens` is not built yet.
 */
import type { FastifyInstance } from "fastify";
import { GatewayError } from "../../errors/gateway-error.js";
import { unknownModel } from "../../pipeline/steps/resolve.js";
import type { Router } from "../../router/router.js";
import { parseCountTokensRequest } from "./schema.js";

/**
 * Registers the route.
 * @throws GatewayError (answered) 400 for a bad body or unknown model, else 400 saying counting is not served.
 */
export function countTokensRoute(app: FastifyInstance, router: Router): void {
  app.post(
    "/v1/messages/count_tokens",
    { config: { errorFormat: "anthropic", apiKeyHeader: true } },
    async (request) => {
      const body = parseCountTokensRequest(request.body);
      if (router.deployments(body.model) === undefined) throw unknownModel(body.model);
      throw new GatewayError(
        400,
        `Token counting (count_tokens) is not served for model=${body.model}: the gateway cannot ask its upstream for an exact count. Send the request to /v1/messages and read usage.input_tokens instead.`,
        { type: "invalid_request_error", param: "model" },
      );
    },
  );
}
