/**
 * Authorize step: the key may use the alias (`models` of the key; empty means every alias), and the call's route
 * plan keeps only the fallbacks it may use too: a fallback to a model the caller may not call is skipped, never
 * served (and never priced into its reservation).
 */

import type { AuthContext } from "../../auth/types.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { CallContext } from "../types.js";

/**
 * Checks the requested alias and narrows `call.route` (set by the resolve step) to the aliases the caller may use.
 * @throws GatewayError 403 `key_model_access_denied` listing the aliases the key may use.
 */
export function authorize(call: CallContext): void {
  authorizeModel(call.auth, call.body.model);
  const route = call.route;
  if (route === undefined || route.aliases.every((alias) => mayUse(call.auth, alias))) return;
  const aliases = route.aliases.filter((alias) => mayUse(call.auth, alias));
  call.route = {
    aliases,
    deployments: route.deployments.filter((d) => aliases.includes(d.modelName)),
  };
}

/** Whether `auth` may call the alias `model` (a virtual key's `models` list, when it has one). */
export function mayUse(auth: AuthContext, model: string): boolean {
  return auth.kind !== "virtual" || auth.models.length === 0 || auth.models.includes(model);
}

/**
 * The key of `auth` may use the alias `model` (its `models` list, when it has one).
 * @throws GatewayError 403 `key_model_access_denied` naming the allowed models.
 */
export function authorizeModel(auth: AuthContext, model: string): void {
  if (!mayUse(auth, model)) {
    const allowed = auth.kind === "virtual" ? auth.models.join(", ") : "";
    throw new GatewayError(
      403,
      `This key is not allowed to call model=${model}. Allowed models: ${allowed}.`,
      { type: "permission_error", param: "model", code: "key_model_access_denied" },
    );
  }
}
