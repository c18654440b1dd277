/**
 * The errors of a routed call that no deployment took (`router.ts`): every deployment at its rpm/tpm limit
 * (429, LiteLLM's wording), none matching the request's tags under tag filtering (400), none registered (500).
 * A call some deployment failed gets the upstream's failure instead (`upstream-error.ts`).
 */
import { GatewayError } from "../errors/gateway-error.js";

/**
 * The 429 when every deployment of every alias tried is at its rpm/tpm limit (LiteLLM's wording).
 * @param retryAfterMs until the limits' minute resets, ms (`retry-after` in whole seconds, at least 1).
 */
export function allAtLimit(modelName: string, retryAfterMs: number): GatewayError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new GatewayError(
    429,
    `No deployments available for selected model=${modelName}: every deployment of the model group is at its rpm/tpm limit for this minute. Try again in ${seconds} seconds.`,
    { type: "rate_limit_error", code: "429", headers: { "retry-after": String(seconds) } },
  );
}

/** The 400 when tag filtering leaves no deployment for the request's tags. */
export function noTaggedDeployment(modelName: string, tags: readonly string[]): GatewayError {
  const wanted = tags.length === 0 ? "no tags" : `tags=${tags.join(",")}`;
  return new GatewayError(
    400,
    `No deployment of model=${modelName} matches ${wanted} (tag-based routing is on: router_settings.enable_tag_filtering).`,
    { type: "invalid_request_error", param: "tags", code: "no_deployments_with_tag_routing" },
  );
}

/** The 500 when no deployment is registered for the alias (and none of its fallbacks). */
export function noDeployment(modelName: string): GatewayError {
  return new GatewayError(500, `No deployment registered for model=${modelName}.`, {
    type: "internal_error",
  });
}
