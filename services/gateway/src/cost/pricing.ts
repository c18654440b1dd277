/**
 * What a deployment costs, in USD per token. A deployment's own `input_cost_per_token` /
 * `output_cost_per_token` and per-part prices (`cache_read_input_token_cost`, …: config/price-keys.ts; in
 * litellm_params or model_info, LiteLLM's custom pricing keys) win, key by key; otherwise the
 * list price of its `model_info.base_model` (else its upstream model) from the maintained price catalogue
 * (`cost/list-prices.ts`: its provider first, then the model makers' own APIs, so that a Claude model served
 * through an OpenAI-compatible proxy keeps its list price). Unknown models cost 0 and are counted in tokens only;
 * the config loader warns about them once at start-up ({@link isPriced}).
 */
import type { Deployment, ProviderName } from "../config/types.js";
import { tierOf } from "./bill.js";
import { catalogPrice } from "./list-prices.js";
import type { Price } from "./price.js";

export type { Price } from "./price.js";

const ZERO: Price = { input: 0, output: 0 };
const cache = new WeakMap<Deployment, Price>();

/**
 * The list price of `upstreamModel` (e.g. `gpt-4o-2024-08-06`) from the price catalogue, searching `provider`
 * first; undefined when the catalogue has no price for it. USD per token.
 */
export function listPrice(provider: ProviderName, upstreamModel: string): Price | undefined {
  return catalogPrice(provider, upstreamModel)?.price;
}

/** The list price of a deployment's model: its `model_info.base_model` when set, else its upstream model. */
function listPriceOf(deployment: Deployment): Price | undefined {
  return listPrice(deployment.provider, deployment.baseModel ?? deployment.upstreamModel);
}

/** Whether a deployment has a price: both costs set in the config, or a list price for its model. */
export function isPriced(deployment: Deployment): boolean {
  if (deployment.inputCostPerToken !== undefined && deployment.outputCostPerToken !== undefined) return true;
  return listPriceOf(deployment) !== undefined;
}

/** The price of one deployment, USD per token (memoized; deployments are immutable after load). */
export function priceOf(deployment: Deployment): Price {
  let price = cache.get(deployment);
  if (price === undefined) {
    const listed = listPriceOf(deployment) ?? ZERO;
    price = {
      ...listed,
      ...deployment.priceParts,
      input: deployment.inputCostPerToken ?? listed.input,
      output: deployment.outputCostPerToken ?? listed.output,
    };
    cache.set(deployment, price);
  }
  return price;
}

/**
 * The highest price any input token and any output token of a call may be billed at among `deployments`, USD per
 * token: what a reservation must assume before the answer says how the tokens divide. Input: the plain price,
 * cache writes (5 m and 1 h, which cost more than plain input) and audio; output: the plain price, audio and
 * reasoning; each in the long-context tier as the bill prices it ({@link tierOf}) when the prompt may exceed
 * 200,000 tokens (`promptTokens`, an upper bound).
 */
export function maxPrice(deployments: readonly Deployment[], promptTokens = 0): Price {
  let input = 0;
  let output = 0;
  for (const d of deployments) {
    const p = tierOf(priceOf(d), promptTokens);
    input = Math.max(input, p.input, p.cacheWrite ?? 0, p.cacheWrite1h ?? 0, p.inputAudio ?? 0);
    output = Math.max(output, p.output, p.outputAudio ?? 0, p.outputReasoning ?? 0);
  }
  return { input, output };
}
