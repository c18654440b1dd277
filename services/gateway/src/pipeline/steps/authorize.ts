/** Authorize step: the key may use the alias (`models` of the key; empty means every alias). */
import { GatewayError } from "../../errors/gateway-error.js";
import type { CallContext } from "../types.js";

/** @throws GatewayError 403 `key_model_access_denied` listing the aliases the key may use. */
export function authorize(call: CallContext): void {
  const { auth } = call;
  const model = call.body.model;
  if (auth.kind === "virtual" && auth.models.length > 0 && !auth.models.includes(model)) {
    throw new GatewayError(
      403,
      `This key is not allowed to call model=${model}. Allowed models: ${auth.models.join(", ")}.`,
      { type: "permission_error", param: "model", code: "key_model_access_denied" },
    );
  }
}
