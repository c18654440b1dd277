/** Guard-input step: the configured {@link ChatGuard}'s input check, before anything goes upstream. */
import type { CallContext } from "../context.js";
import type { ChatGuard } from "../hooks.js";

/**
 * Runs `guard.checkInput` (nothing without a guard) and adds its decisions to `call.decisions`.
 * @throws GatewayError whatever the guard throws to block the call.
 */
export async function guardInput(call: CallContext, guard: ChatGuard | undefined): Promise<void> {
  if (guard === undefined) return;
  const outcome = await guard.checkInput(call);
  call.decisions.push(...outcome.decisions);
}
