/**
 * Admit step: rate limits and the budget reservation of a virtual key's subjects (key, then its user), through
 * the {@link Admitter}. The reservation is the call's worst case: the prompt estimate at the highest input price
 * of the alias's deployments plus the completion cap at the highest output price.
 */
import { maxPrice } from "../../cost/pricing.js";
import type { Admitter } from "../../limits/types.js";
import type { CallContext } from "../types.js";

/**
 * Sets `call.admission` (left undefined for the master key, keys without limits, or no admitter).
 * @throws GatewayError 429 `rate_limit_error` / `budget_exceeded` from the admitter.
 */
export async function admit(call: CallContext, admitter: Admitter | undefined): Promise<void> {
  const { auth } = call;
  if (auth.kind !== "virtual" || auth.subjects.length === 0 || admitter === undefined) return;
  const price = maxPrice(call.deployments);
  call.admission = await admitter.admit({
    subjects: auth.subjects,
    model: call.body.model,
    estimatedCost: call.promptEstimate * price.input + call.completionEstimate * price.output,
    estimatedTokens: call.promptEstimate + call.completionEstimate,
  });
}
