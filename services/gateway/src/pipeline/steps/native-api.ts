/**
 * Which upstream API a call can be sent to natively, read from its authorized route plan (`call.route`: the
 * alias's deployments, then those of the fallbacks the caller may use): {@link servesNatively} for endpoints that
 * translate otherwise, {@link requireNativeApi} for endpoints that have no translation (refused with a 400 that
 * names the model and what it lacks, instead of an upstream 404 from a provider without that API).
 */
import { GatewayError } from "../../errors/gateway-error.js";
import { adapterFor, type UpstreamApi } from "../../providers/index.js";
import type { CallContext } from "../types.js";

/** The deployments `call` may be sent to: its route plan (none before the resolve step). */
const reachable = (call: CallContext) => call.route?.deployments ?? [];

/**
 * Whether every deployment `call` may be sent to serves `api` natively (`ProviderAdapter.serves`); false when
 * there is none.
 */
export function servesNatively(call: CallContext, api: UpstreamApi): boolean {
  const deployments = reachable(call);
  return deployments.length > 0 && deployments.every((d) => adapterFor(d.provider).serves(d, api));
}

/**
 * Refuses `call` when a deployment it may be sent to (its route plan) does not serve `api` natively.
 * @param what the API's name in the message, e.g. `embeddings` or `text completions (/v1/completions)`.
 * @throws GatewayError 400 `invalid_request_error`, param `model`, code `unsupported_model_api`.
 */
export function requireNativeApi(call: CallContext, api: UpstreamApi, what: string): void {
  const lacking = reachable(call).filter((d) => !adapterFor(d.provider).serves(d, api));
  if (lacking.length === 0) return;
  const providers = [...new Set(lacking.map((d) => d.provider))].join(", ");
  throw new GatewayError(
    400,
    `model=${call.body.model} serves no ${what}: its deployments on provider ${providers} have no /${api} API. Use a model whose provider serves /v1/${api} (e.g. an openai/ deployment).`,
    { type: "invalid_request_error", param: "model", code: "unsupported_model_api" },
  );
}
