/**
 * `GET /model/info` and `/v1/model/info` (LiteLLM's route of that name; master key only): every deployment with
 * the prices it is billed at. Each entry: `model_name` (the alias), `litellm_params.model` (`provider/upstream
 * model`; never the API key or base URL), and `model_info` with the deployment's `id` (the spend log's
 * `model_id`), `base_model` when set, and its prices in LiteLLM's keys, USD per token: `input_cost_per_token`,
 * `output_cost_per_token` and each per-part price the deployment has (`cache_read_input_token_cost`, …;
 * config/price-keys.ts), as `cost/pricing.ts` resolves them (config values over the list price). An unpriced
 * deployment shows 0 for input and output.
 */
import type { FastifyInstance } from "fastify";
import { requireMaster } from "../auth/require-master.js";
import { PRICE_PART_KEYS, type PricePart, type PricePartKey } from "../config/price-keys.js";
import type { Deployment } from "../config/types.js";
import { priceOf } from "../cost/pricing.js";
import type { Router } from "../router/router.js";

/** Price part → its LiteLLM key (the inverse of {@link PRICE_PART_KEYS}). */
const KEY_OF_PART = Object.fromEntries(
  Object.entries(PRICE_PART_KEYS).map(([key, part]) => [part, key]),
) as Record<PricePart, PricePartKey>;

/** One deployment as `/model/info` lists it. */
function modelInfoOf(deployment: Deployment) {
  const { input, output, ...parts } = priceOf(deployment);
  const partPrices: Partial<Record<PricePartKey, number>> = {};
  for (const [part, value] of Object.entries(parts) as Array<[PricePart, number | undefined]>) {
    if (value !== undefined) partPrices[KEY_OF_PART[part]] = value;
  }
  return {
    model_name: deployment.modelName,
    litellm_params: { model: `${deployment.provider}/${deployment.upstreamModel}` },
    model_info: {
      id: deployment.id,
      ...(deployment.baseModel === undefined ? {} : { base_model: deployment.baseModel }),
      input_cost_per_token: input,
      output_cost_per_token: output,
      ...partPrices,
    },
  };
}

/** Registers `/model/info` and `/v1/model/info`. */
export async function modelInfoRoutes(app: FastifyInstance, options: { router: Router }): Promise<void> {
  const handler = async (request: import("fastify").FastifyRequest) => {
    requireMaster(request);
    const deployments = options.router.models().flatMap((m) => options.router.deployments(m.id) ?? []);
    return { data: deployments.map(modelInfoOf) };
  };
  app.get("/model/info", handler);
  app.get("/v1/model/info", handler);
}
