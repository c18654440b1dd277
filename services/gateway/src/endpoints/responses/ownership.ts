/**
 * Response ownership on the Responses endpoint (`response-owners/`): every response id relayed from a native
 * upstream is recorded with its owner (the caller's key) and the deployment that served it, and a
 * `previous_response_id` that the caller does not own is refused the way OpenAI refuses an unknown one, before
 * anything goes upstream (OpenAI API reference, "Create a model response", `previous_response_id`; the error is
 * OpenAI's own for a response it does not hold).
 */
import type { Deployment } from "../../config/types.js";
import { GatewayError, invalidRequest } from "../../errors/gateway-error.js";
import type { CallContext, PipelineDeps } from "../../pipeline/types.js";
import { mayUse, ownerOf } from "../../response-owners/types.js";
import { type NativeEventReader, observedReader } from "../../streaming/native-relay.js";

/** Longest response id quoted back in a message, characters. */
const MAX_ID_CHARS = 100;

/** `id` as quoted in an error message (cut at {@link MAX_ID_CHARS}). */
export const shownId = (id: string): string =>
  id.length > MAX_ID_CHARS ? `${id.slice(0, MAX_ID_CHARS)}…` : id;

/** OpenAI's 404 for a `previous_response_id` it does not hold (given here too for one the caller does not own). */
export function previousNotFound(id: string): GatewayError {
  return new GatewayError(404, `Previous response with id '${shownId(id)}' not found.`, {
    type: "invalid_request_error",
    param: "previous_response_id",
    code: "previous_response_not_found",
  });
}

/**
 * Lets `call` continue `previousId` only when its key owns it (the master key: any), and only where the response
 * is held ({@link pinToHolder}).
 * @throws GatewayError 404 `previous_response_not_found` otherwise (unknown, expired, or another key's: the
 *   same answer, so nothing tells them apart); 400 when the model cannot reach the response's organisation; 503
 *   when ownership cannot be read.
 */
export async function checkPrevious(
  call: CallContext,
  deps: PipelineDeps,
  previousId: string,
): Promise<void> {
  const record = await deps.responseOwners?.lookup(previousId);
  if (call.auth.kind === "master") {
    // The master key may continue a response the gateway never relayed; one it did is pinned like any.
    if (record !== undefined) pinToHolder(call, deps, previousId, record.deploymentId);
    return;
  }
  if (!mayUse(call.auth, record)) throw previousNotFound(previousId);
  pinToHolder(call, deps, previousId, record.deploymentId);
}

/** Two deployments reach the same upstream organisation: one provider, base URL and API key. */
const sameAccount = (a: Deployment, b: Deployment) =>
  a.provider === b.provider && a.apiBase === b.apiBase && a.apiKey === b.apiKey;

/**
 * Narrows `call.route` to the deployments that reach the organisation holding the response (the deployment that
 * served it, and any other of the plan with its provider, base URL and key): a stored response lives at one
 * organisation, and a load-balanced alias or a fallback elsewhere would answer "not found" or continue nothing.
 * @throws GatewayError 404 `previous_response_not_found` when the deployment that served it is no longer
 *   configured; 400 naming the models that can continue it when none of the call's plan reaches it.
 */
function pinToHolder(call: CallContext, deps: PipelineDeps, previousId: string, holderId: string): void {
  const route = call.route;
  if (route === undefined) return;
  const holder = deps.router.allDeployments().find((d) => d.id === holderId);
  if (holder === undefined) throw previousNotFound(previousId);
  const pinned = route.deployments.filter((d) => sameAccount(d, holder));
  if (pinned.length === 0) {
    const models = [
      ...new Set(
        deps.router
          .allDeployments()
          .filter((d) => sameAccount(d, holder))
          .map((d) => d.modelName),
      ),
    ];
    throw invalidRequest(
      `Response '${shownId(previousId)}' is held by the upstream of ${models.join(", ")}, which model ${call.body.model} does not reach. Continue it with ${models.length === 1 ? "that model" : "one of those models"}, or send the whole conversation as input.`,
      "previous_response_id",
    );
  }
  call.route = {
    aliases: route.aliases.filter((alias) => pinned.some((d) => d.modelName === alias)),
    deployments: pinned,
    only: new Set(pinned.map((d) => d.id)),
  };
}

/**
 * Whether an output guard changed or stopped what the client got (a post-call mask or block, enforced): the
 * upstream stored its own answer, which the owner could then read back unguarded, so such a response is not
 * recorded (it is neither retrievable nor continuable through the gateway).
 */
function outputGuarded(call: CallContext): boolean {
  return call.decisions.some(
    (d) => d.hook === "post_call" && d.mode === "enforce" && (d.action === "mask" || d.action === "block"),
  );
}

/**
 * Records `responseId` as the call's, served by the call's deployment, unless an output guard changed or stopped
 * the answer ({@link outputGuarded}). Call once the answer went out whole (its guard decisions are known).
 */
export function recordRelayed(call: CallContext, deps: PipelineDeps, responseId: unknown): void {
  const deployment = call.upstream?.deployment;
  if (typeof responseId !== "string" || deployment === undefined || outputGuarded(call)) return;
  deps.responseOwners?.record(responseId, ownerOf(call.auth), deployment.id);
}

/**
 * `reader` that also notes the response id a stream names (`response.created`, else `response.completed` /
 * `.incomplete` / `.failed`: `response.id`), for {@link recordRelayed} once the stream has ended.
 */
export function idNotingReader(reader: NativeEventReader): {
  reader: NativeEventReader;
  id(): string | undefined;
} {
  let noted: string | undefined;
  return {
    id: () => noted,
    reader: observedReader(reader, (event) => {
      const json = event.json;
      if (
        noted === undefined &&
        json !== undefined &&
        typeof json.type === "string" &&
        json.type.startsWith("response.")
      ) {
        const id = (json.response as { id?: unknown } | undefined)?.id;
        if (typeof id === "string") noted = id;
      }
    }),
  };
}
