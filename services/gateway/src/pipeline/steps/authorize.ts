/** Authorize step: the key may use the alias (`models` of the key; empty means every alias). */

import type { AuthContext } from "../../auth/types.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { CallContext } from "../types.js";

/** @throws GatewayError 403 `key_model_access_denied` listing the aliases the key may use. */
export function authorize(call: CallContext): void {
  authorizeModel(call.auth, call.body.model);
}

/**
 * The key of `auth` may use the alias `model` (its `models` list, when it has one).
 * @throws GatewayError 403 `key_model_access_denied` naming the allowed models.
 */
export function authorizeModel(auth: AuthContext, model: string): void {
  if (auth.kind === "virtual" && auth.models.length > 0 && !auth.models.includes(model)) {
    throw new GatewayError(
      403,
      `This key is not allowed to call model=${model}. Allowed models: ${auth.models.join(", ")}.`,
      { type: "permission_error", param: "model", code: "key_model_access_denied" },
    );
  }
}
