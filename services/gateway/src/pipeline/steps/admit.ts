/**
 * Admit step: the call's reservation (`cost/reservation.ts`: the worst case over its route plan), then rate
 * limits and that reservation against the budgets of a virtual key's subjects (key, then its user), through the
 * {@link Admitter}. A call without an output cap that its budgets cannot pay for at the plan's maximum output is
 * admitted once more with the largest cap they can pay for, which the send step adds upstream.
 */
import { inputTokenBound } from "../../cost/input-bound.js";
import { affordableCap, type Reservation, type ReservationInput, reserve } from "../../cost/reservation.js";
import { BudgetRefusal } from "../../limits/rules.js";
import type { Admitter } from "../../limits/types.js";
import type { CallContext } from "../types.js";

/**
 * Sets `call.reservation`, `call.completionEstimate` and `call.outputLimit`, and `call.admission` (left
 * undefined for the master key, keys without limits, or no admitter).
 * @throws GatewayError 429 `rate_limit_error` / `budget_exceeded` from the admitter.
 */
export async function admit(call: CallContext, admitter: Admitter | undefined): Promise<void> {
  const { auth } = call;
  const budgetInForce = auth.kind === "virtual" && auth.subjects.some((s) => s.maxBudget !== null);
  const deployments = call.route?.deployments ?? call.deployments;
  const input: ReservationInput = {
    // The tokenizer runs only where a budget depends on it; rate limits count the cheap estimate.
    promptTokens: budgetInForce ? inputTokenBound(call.body, deployments) : call.promptEstimate,
    output: call.outputRequest,
    deployments,
    budgetInForce,
  };
  hold(call, reserve(input), budgetInForce);
  if (auth.kind !== "virtual" || auth.subjects.length === 0 || admitter === undefined) return;
  try {
    call.admission = await admitter.admit(admissionRequest(call));
  } catch (error) {
    const capped =
      error instanceof BudgetRefusal && call.outputRequest.cap === undefined
        ? affordableCap(input, error.available)
        : undefined;
    if (capped === undefined) throw error;
    hold(call, capped, budgetInForce);
    call.admission = await admitter.admit(admissionRequest(call));
  }
}

/** Makes `reservation` the call's: what it reserves, what its stream may relay, the cap it sends. */
function hold(call: CallContext, reservation: Reservation, budgetInForce: boolean): void {
  call.reservation = reservation;
  call.completionEstimate = reservation.completionTokens;
  // A stream stops at the client's own cap, or where a budget's reservation ends; else it runs as long as the
  // upstream answers (nothing is cut that no budget needs cut).
  const bounded = budgetInForce || call.outputRequest.cap !== undefined;
  call.outputLimit = bounded ? reservation.completionTokens : Number.POSITIVE_INFINITY;
}

function admissionRequest(call: CallContext) {
  const { auth, reservation } = call;
  return {
    subjects: auth.kind === "virtual" ? auth.subjects : [],
    model: call.body.model,
    estimatedCost: reservation!.cost,
    estimatedTokens: call.promptEstimate + reservation!.completionTokens,
  };
}
