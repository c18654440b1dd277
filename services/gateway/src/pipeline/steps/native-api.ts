/**
 * A check before the send step of an endpoint that has no translation: every deployment of the requested alias
 * must serve the endpoint's upstream API natively (`ProviderAdapter.serves`), else the call is refused with a
 * 400 that names the model and what it lacks, instead of an upstream 404 from a provider without that API.
 */
import { GatewayError } from "../../errors/gateway-error.js";
import { adapterFor, type UpstreamApi } from "../../providers/index.js";
import type { CallContext } from "../types.js";

/**
 * Refuses `call` when a deployment of its alias (`call.deployments`, set by the resolve step) does not serve
 * `api` natively.
 * @param what the API's name in the message, e.g. `embeddings` or `text completions (/v1/completions)`.
 * @throws GatewayError 400 `invalid_request_error`, param `model`, code `unsupported_model_api`.
 */
export function requireNativeApi(call: CallContext, api: UpstreamApi, what: string): void {
  const lacking = call.deployments.filter((d) => !adapterFor(d.provider).serves(d, api));
  if (lacking.length === 0) return;
  const providers = [...new Set(lacking.map((d) => d.provider))].join(", ");
  throw new GatewayError(
    400,
    `model=${call.body.model} serves no ${what}: its deployments on provider ${providers} have no /${api} API. Use a model whose provider serves /v1/${api} (e.g. an openai/ deployment).`,
    { type: "invalid_request_error", param: "model", code: "unsupported_model_api" },
  );
}
