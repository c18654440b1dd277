/** Guard-input step: the configured {@link CallGuard}'s input check, before anything goes upstream. */
import type { CallGuard, GuardDecision, GuardOutcome, TextExtractor } from "../../guardrails/types.js";

/**
 * What the step reads and writes of a call: a model call's `CallContext`, or another call the gateway guards the
 * same way (a `/mcp` tools/call, `mcp/tool-call.ts`).
 */
export interface InputGuardedCall {
  /** Where the request's texts are (the guard may rewrite them: masking). */
  body: Record<string, unknown>;
  /** The call's guardrail decisions so far; the step adds the input guard's. */
  decisions: GuardDecision[];
  /** The client's JSON text, sent upstream in place of `body` only while the guard left `body` as it was. */
  json?: unknown;
}

/**
 * Runs `guard.checkInput` on the texts the endpoint's `texts` extracts (nothing without a guard) and adds its
 * decisions to `call.decisions`. Unless the guard answers `rewritten: false`, `call.body` is serialised for the
 * upstream (`call.json` dropped).
 * @param guard the gateway's {@link CallGuard} (any guard with its `checkInput` for this kind of call).
 * @throws GatewayError whatever the guard throws to block the call.
 */
export async function guardInput<C extends InputGuardedCall>(
  call: C,
  guard: { checkInput(call: C, texts: TextExtractor): Promise<GuardOutcome> } | undefined,
  texts: TextExtractor,
): Promise<void> {
  if (guard === undefined) return;
  const outcome = await guard.checkInput(call, texts);
  // Only a guard that says it changed nothing lets the client's text go upstream as it came.
  if (outcome.rewritten !== false) call.json = undefined;
  call.decisions.push(...outcome.decisions);
}
