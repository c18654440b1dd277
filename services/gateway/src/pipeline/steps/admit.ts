/**
 * Admit step: the call's reservation (`cost/reservation.ts`: the worst case over its route plan), then rate
 * limits and that reservation against the budgets of a virtual key's subjects (key, then its user), through the
 * {@link Admitter}.
 *
 * The input is first bounded by its UTF-8 bytes, which costs one byte count a string. Only when a budget refuses
 * that does the gateway count again with the models' own tokenizer (~4× tighter for English, but µs to ms of
 * work), and, for a call without an output cap, admit it with the largest cap the budgets can pay for, which the
 * send step adds upstream. A refused admission counts nothing (the admitter checks every limit before it counts
 * any), so each try is clean.
 */

import type { AuthContext } from "../../auth/types.js";
import { DEFAULT_MAX_OUTPUT_TOKENS } from "../../cost/estimate.js";
import { byteBound, tokenizerBound } from "../../cost/input-bound.js";
import {
  affordableCap,
  promptCost,
  type Reservation,
  type ReservationInput,
  reserve,
} from "../../cost/reservation.js";
import { BudgetRefusal } from "../../limits/rules.js";
import type { Admission, AdmissionRequest, Admitter } from "../../limits/types.js";
import type { TopUp } from "../../streaming/output-top-up.js";
import type { CallContext } from "../types.js";

/**
 * Sets `call.reservation`, `call.completionEstimate` and `call.outputLimit`, and `call.admission` (left
 * undefined for the master key, keys without limits, or no admitter).
 * @throws GatewayError 429 `rate_limit_error` / `budget_exceeded` from the admitter.
 */
export async function admit(call: CallContext, admitter: Admitter | undefined): Promise<void> {
  const { auth } = call;
  const limited = isLimited(auth, admitter);
  const budgetInForce = limited && auth.kind === "virtual" && auth.subjects.some((s) => s.maxBudget !== null);
  const deployments = call.route?.deployments ?? [];
  let input: ReservationInput = {
    // A free call (count_tokens) reserves nothing; without a budget only rate limits read the cheap estimate.
    promptTokens: call.free ? 0 : budgetInForce ? byteBound(call.body, deployments) : call.promptEstimate,
    output: call.free ? { cap: 0, choices: 1 } : call.outputRequest,
    deployments,
    budgetInForce,
  };
  hold(call, reserve(input), budgetInForce);
  if (!limited) return;
  try {
    call.admission = await admitAs(auth, admitter, admissionRequest(call));
    return;
  } catch (error) {
    if (!(error instanceof BudgetRefusal) || call.free) throw error;
    let refusal = error;
    const counted = tokenizerBound(call.body, deployments);
    if (counted !== undefined && counted < input.promptTokens) {
      input = { ...input, promptTokens: counted };
      hold(call, reserve(input), budgetInForce);
      try {
        call.admission = await admitAs(auth, admitter, admissionRequest(call));
        return;
      } catch (again) {
        if (!(again instanceof BudgetRefusal)) throw again;
        refusal = again;
      }
    }
    if (call.outputRequest.cap !== undefined) throw refusal;
    const capped = affordableCap(input, refusal.available);
    if (capped === undefined) throw refusal.forPromptAlone(promptCost(input));
    hold(call, capped, budgetInForce);
    call.admission = await admitAs(auth, admitter, admissionRequest(call));
  }
}

/**
 * Whether `auth`'s calls are counted and budgeted: a virtual key with limit subjects (the key, its user, or its
 * team and its membership there), when the gateway has an admitter. The master key never is.
 */
function isLimited(auth: AuthContext, admitter: Admitter | undefined): admitter is Admitter {
  return auth.kind === "virtual" && auth.subjects.length > 0 && admitter !== undefined;
}

/**
 * Admits one call of `auth` through the admitter, the same way for every kind of call: the model routes
 * (above) and other calls the gateway serves at a cost known before they run (a `/mcp` tools/call at its
 * server's cost per query, `mcp/tool-call.ts`). Counts it against every subject's rate limits (`rpm_limit`, and
 * `tpm_limit` by `estimatedTokens`) and reserves `estimatedCost` (USD) against their budgets. The subjects are
 * `auth`'s (`VirtualKeyAuth.subjects`).
 * @returns the admission to settle or release, or undefined when `auth` is not limited (master key, a key
 *   without subjects, no admitter).
 * @throws GatewayError 429 `rate_limit_error` / `budget_exceeded` from the admitter.
 */
export async function admitAs(
  auth: AuthContext,
  admitter: Admitter | undefined,
  request: Omit<AdmissionRequest, "subjects">,
): Promise<Admission | undefined> {
  if (!isLimited(auth, admitter)) return undefined;
  return admitter.admit({ ...request, subjects: auth.kind === "virtual" ? auth.subjects : [] });
}

/**
 * Admits a call answered from the response cache ({@link admitAs}): it counts as one request against rpm (and
 * holds a parallel slot while it is answered) like any other, but reserves nothing and counts no tokens: it
 * reaches no upstream. A key whose budget is spent is still refused, as for a free call.
 * @throws GatewayError 429 `rate_limit_error` / `budget_exceeded` from the admitter.
 */
export async function admitCacheHit(call: CallContext, admitter: Admitter | undefined): Promise<void> {
  call.admission = await admitAs(call.auth, admitter, {
    model: call.body.model,
    estimatedCost: 0,
    estimatedTokens: 0,
  });
}

/**
 * Makes `reservation` the call's: what it reserves, what its stream may relay, the cap it sends, and the output
 * that rate limits and routing expect (the cap the upstream is sent, else the default: not the plan's maximum,
 * which a deployment's `tpm` would hold for every call in flight).
 */
function hold(call: CallContext, reservation: Reservation, budgetInForce: boolean): void {
  call.reservation = reservation;
  const { cap, choices } = call.outputRequest;
  call.completionEstimate = (cap ?? reservation.cap?.tokens ?? DEFAULT_MAX_OUTPUT_TOKENS) * choices;
  // A stream stops at the client's own cap, or where a budget's reservation ends; else it runs as long as the
  // upstream answers (nothing is cut that no budget needs cut).
  const bounded = budgetInForce || cap !== undefined;
  call.outputLimit = bounded ? reservation.completionTokens : Number.POSITIVE_INFINITY;
}

/**
 * The top-up of a stream whose output reservation a budget set (`streaming/output-top-up.ts`): when the stream
 * reaches it, the same output again is reserved from the budgets (key, user) at the reservation's output price
 * (`Admission.extend`), else what they can still pay for; 0 tokens when they cannot (the stream is then cut).
 * None, so cut at once, when the call has no admission or the client set its own cap (it asked for no more: an
 * upstream that ignores that cap is cut there), or when nothing bounds the stream.
 * @returns the relay's `topUp` option (absent when the stream is cut at once); the top-up resolves the output
 *   tokens granted, all choices together, and never rejects.
 */
export function withTopUp(call: CallContext): { topUp?: TopUp } {
  const { admission, reservation } = call;
  if (admission === undefined || reservation === undefined) return {};
  if (call.outputRequest.cap !== undefined || !Number.isFinite(call.outputLimit)) return {};
  const price = reservation.outputPrice;
  const size = Math.max(1, reservation.completionTokens);
  const topUp = async () => {
    const same = await admission.extend(size * price);
    if (same.granted) return size;
    // What the budgets can still pay for, rounded down so that its micro-USD stay within what they have.
    const affordable = price > 0 ? Math.floor((same.available - 0.5e-6) / price) : 0;
    if (affordable < 1) return 0;
    return (await admission.extend(affordable * price)).granted ? affordable : 0;
  };
  return { topUp };
}

function admissionRequest(call: CallContext): Omit<AdmissionRequest, "subjects"> {
  const { reservation } = call;
  return {
    model: call.body.model,
    estimatedCost: reservation!.cost,
    estimatedTokens: call.promptEstimate + call.completionEstimate,
  };
}
