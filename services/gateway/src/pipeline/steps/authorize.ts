/**
 * Authorize step: the key may use the alias (`models` of the key and of its team; empty means every alias), and the call's route
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

const allows = (list: readonly string[] | undefined, model: string) =>
  list === undefined || list.length === 0 || list.includes(model);

/**
 * Whether `auth` may call the alias `model`: a virtual key's `models` list, when it has one, and its team's
 * `models`, when the key belongs to a team that has one.
 */
export function mayUse(auth: AuthContext, model: string): boolean {
  return auth.kind !== "virtual" || (allows(auth.models, model) && allows(auth.teamModels, model));
}

/**
 * The key of `auth` may use the alias `model` (its `models` list, when it has one).
 * @throws GatewayError 403 `key_model_access_denied` naming the allowed models.
 */
export function authorizeModel(auth: AuthContext, model: string): void {
  if (!mayUse(auth, model)) {
    const own = auth.kind === "virtual" ? auth.models : [];
    const team = auth.kind === "virtual" ? (auth.teamModels ?? []) : [];
    const allowed = own.length === 0 ? team : team.length === 0 ? own : own.filter((m) => team.includes(m));
    const whose = auth.kind === "virtual" && !allows(auth.teamModels, model) ? "This key's team" : "This key";
    throw new GatewayError(
      403,
      `${whose} is not allowed to call model=${model}. Allowed models: ${allowed.join(", ")}.`,
      {
        type: "permission_error",
        param: "model",
        code: "key_model_access_denied",
        reason: "key_model_access_denied",
      },
    );
  }
}
