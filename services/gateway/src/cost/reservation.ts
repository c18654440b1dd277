/**
 * The budget reservation of a call, the same for every endpoint: the worst case over its route plan (every
 * deployment it may be sent to, fallbacks included), so that concurrent calls can never spend past a budget.
 *
 *   reservation (USD) = input tokens bounded from above × the plan's highest input price
 *                     + choices × output tokens per choice × the plan's highest output price
 *
 * (the highest price any token may be billed at: cache writes, audio, reasoning, the long-context tier;
 * `cost/pricing.ts` `maxPrice`).
 *
 * Output per choice is the request's own cap when it sets one (`max_tokens`, `max_completion_tokens`,
 * `max_output_tokens`), else the most any deployment of the plan can answer (`model_info.max_output_tokens`, else
 * the model's output limit in models.dev's catalogue, `cost/output-limits.ts`, else
 * {@link DEFAULT_MAX_OUTPUT_TOKENS}). Choices are `n` (and `best_of`, and one per prompt of a batched text
 * completion).
 *
 * Caps never cut an answer the budgets can pay for: the gateway adds an output cap upstream only
 * - when the budgets in force cannot pay for the plan's maximum: then the cap is what they can pay for
 *   ({@link affordableCap}), reason `budget`;
 * - when a budget is in force and some deployment of the plan has no known maximum (a self-hosted model nobody
 *   described, in neither the config nor the catalogue): {@link DEFAULT_MAX_OUTPUT_TOKENS}, reason `default`.
 * With no budget in force nothing is added: the body reaches the upstream as the client sent it. The cap is
 * said in the `x-gateway-output-cap` response header (`<tokens>; reason=<budget|default>`).
 */
import type { Deployment } from "../config/types.js";
import { DEFAULT_MAX_OUTPUT_TOKENS } from "./estimate.js";
import { catalogOutputLimit } from "./output-limits.js";
import { maxPrice, type Price } from "./pricing.js";

export { DEFAULT_MAX_OUTPUT_TOKENS } from "./estimate.js";

/** What a request asks of the output (an endpoint's `output(body)`). */
export interface OutputRequest {
  /** The request's own cap per choice, tokens; undefined when it sets none; 0 when nothing is generated. */
  cap: number | undefined;
  /** How many answers are generated (`n`, `best_of`, prompts of a batch); ≥ 1. */
  choices: number;
}

/** A cap the gateway adds upstream, tokens per choice, and why. */
export interface AddedCap {
  tokens: number;
  reason: "budget" | "default";
}

/** A call's reservation: tokens and the USD held against its budgets until it is settled. */
export interface Reservation {
  /** Input tokens reserved (an upper bound of the prompt). */
  promptTokens: number;
  /** Output tokens reserved, all choices together. */
  completionTokens: number;
  /** USD. */
  cost: number;
  /** USD per output token it was priced at (the plan's highest): what a top-up of its output costs a token. */
  outputPrice: number;
  /** The cap sent upstream, per choice, when the gateway adds one. */
  cap: AddedCap | undefined;
}

/**
 * The most output one answer of a deployment can have, tokens: `model_info.max_output_tokens`, else the catalogue's
 * limit of its `model_info.base_model` (else its upstream model); undefined when neither knows.
 */
export function maxOutputTokensOf(d: Deployment): number | undefined {
  return d.maxOutputTokens ?? catalogOutputLimit(d.provider, d.baseModel ?? d.upstreamModel);
}

/** The most output one answer of the plan can have, tokens, and whether every deployment's maximum is known. */
export function maxOutputOf(deployments: readonly Deployment[]): { tokens: number; known: boolean } {
  let tokens = 0;
  let known = true;
  for (const d of deployments) {
    const max = maxOutputTokensOf(d);
    if (max === undefined) known = false;
    tokens = Math.max(tokens, max ?? DEFAULT_MAX_OUTPUT_TOKENS);
  }
  return { tokens: tokens === 0 ? DEFAULT_MAX_OUTPUT_TOKENS : tokens, known };
}

/** Inputs of {@link reserve}. */
export interface ReservationInput {
  /** Input tokens bounded from above (`cost/input-bound.ts`). */
  promptTokens: number;
  output: OutputRequest;
  /** Every deployment of the call's route plan. */
  deployments: readonly Deployment[];
  /** Some budget (key, user, team) applies to the call. */
  budgetInForce: boolean;
}

/** The reservation at the plan's maximum output (see the module comment); the cap only where one is due. */
export function reserve(input: ReservationInput): Reservation {
  const price = maxPrice(input.deployments, input.promptTokens);
  const { cap, choices } = input.output;
  if (cap !== undefined) return priced(input.promptTokens, cap, choices, price, undefined);
  const max = maxOutputOf(input.deployments);
  const added: AddedCap | undefined =
    input.budgetInForce && !max.known ? { tokens: DEFAULT_MAX_OUTPUT_TOKENS, reason: "default" } : undefined;
  return priced(input.promptTokens, added?.tokens ?? max.tokens, choices, price, added);
}

/**
 * The reservation with the largest output cap `available` USD can pay for, or undefined when not even one
 * output token per choice fits (the refusal stands).
 */
export function affordableCap(input: ReservationInput, available: number): Reservation | undefined {
  const price = maxPrice(input.deployments, input.promptTokens);
  const { choices } = input.output;
  const inputCost = promptCost(input);
  const perToken = choices * price.output;
  const max = reserve(input).completionTokens / choices;
  const tokens = perToken > 0 ? Math.min(max, Math.floor((available - inputCost) / perToken)) : max;
  if (!(tokens >= 1)) return undefined;
  return priced(input.promptTokens, tokens, choices, price, { tokens, reason: "budget" });
}

/** What the reserved prompt alone costs at the plan's highest input price, USD. */
export function promptCost(input: ReservationInput): number {
  return input.promptTokens * maxPrice(input.deployments, input.promptTokens).input;
}

function priced(
  promptTokens: number,
  perChoice: number,
  choices: number,
  price: Price,
  cap: AddedCap | undefined,
): Reservation {
  const completionTokens = perChoice * choices;
  return {
    promptTokens,
    completionTokens,
    cost: promptTokens * price.input + completionTokens * price.output,
    outputPrice: price.output,
    cap,
  };
}

/** The response header that says the gateway added an output cap upstream, and why. */
export const OUTPUT_CAP_HEADER = "x-gateway-output-cap";

/** The `x-gateway-output-cap` header value of an added cap, e.g. `812; reason=budget`. */
export function capHeader(cap: AddedCap): string {
  return `${cap.tokens}; reason=${cap.reason}`;
}
