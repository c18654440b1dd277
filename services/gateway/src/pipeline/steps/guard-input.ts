/** Guard-input step: the configured {@link CallGuard}'s input check, before anything goes upstream. */

import type { CallGuard, TextExtractor } from "../../guardrails/types.js";
import type { CallContext } from "../types.js";

/**
 * Runs `guard.checkInput` on the texts the endpoint's `texts` extracts (nothing without a guard) and adds its decisions to `call.decisions`. Unless the
 * guard answers `rewritten: false`, `call.body` is serialised for the upstream (`call.json` dropped).
 * @throws GatewayError whatever the guard throws to block the call.
 */
export async function guardInput(
  call: CallContext,
  guard: CallGuard | undefined,
  texts: TextExtractor,
): Promise<void> {
  if (guard === undefined) return;
  const outcome = await guard.checkInput(call, texts);
  // Only a guard that says it changed nothing lets the client's text go upstream as it came.
  if (outcome.rewritten !== false) call.json = undefined;
  call.decisions.push(...outcome.decisions);
}
