/** Resolve step: the requested alias → its deployments and its route plan (fallbacks included). */
import { GatewayError } from "../../errors/gateway-error.js";
import type { Router } from "../../router/router.js";
import type { CallContext } from "../types.js";

/** The 400 for an alias nobody registered (LiteLLM's wording, so existing client handling still matches). */
export function unknownModel(model: string): GatewayError {
  return new GatewayError(
    400,
    `Invalid model name passed in model=${model}. Call \`/v1/models\` to view available models for your key.`,
    { type: "invalid_request_error", param: "model", code: "model_not_found" },
  );
}

/**
 * Sets `call.model` and `call.route` (every deployment the router may try: the alias's, then its fallbacks'; the
 * authorize step narrows it).
 * @throws GatewayError 400 `model_not_found` for an alias that is not registered.
 */
export function resolve(call: CallContext, router: Router): void {
  const route = router.routePlan(call.body.model);
  if (route === undefined) throw unknownModel(call.body.model);
  call.model = call.body.model;
  call.route = route;
}
