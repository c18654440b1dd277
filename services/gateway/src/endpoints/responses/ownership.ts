/**
 * Response ownership on the Responses endpoint (`response-owners/`): every response id relayed from a native
 * upstream is recorded with its owner (the caller's key) and the deployment that served it, and a
 * `previous_response_id` that the caller does not own is refused the way OpenAI refuses an unknown one, before
 * anything goes upstream (OpenAI API reference, "Create a model response", `previous_response_id`; the error is
 * OpenAI's own for a response it does not hold).
 */
import { GatewayError } from "../../errors/gateway-error.js";
import type { CallContext, PipelineDeps } from "../../pipeline/types.js";
import { mayUse, ownerOf } from "../../response-owners/types.js";
import type { EventText, NativeEvent, NativeEventReader } from "../../streaming/native-relay.js";

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
 * Lets `call` continue `previousId` only when its key owns it (the master key: any).
 * @throws GatewayError 404 `previous_response_not_found` otherwise (unknown, expired, or another key's: the
 *   same answer, so nothing tells them apart); 503 when ownership cannot be read.
 */
export async function checkPrevious(
  call: CallContext,
  deps: PipelineDeps,
  previousId: string,
): Promise<void> {
  if (call.auth.kind === "master") return;
  const record = await deps.responseOwners?.lookup(previousId);
  if (!mayUse(call.auth, record)) throw previousNotFound(previousId);
}

/** Records `responseId` as the call's, served by the call's deployment. */
function record(call: CallContext, deps: PipelineDeps, responseId: unknown): void {
  const deployment = call.upstream?.deployment;
  if (typeof responseId !== "string" || deployment === undefined) return;
  deps.responseOwners?.record(responseId, ownerOf(call.auth), deployment.id);
}

/** Records the `id` of a relayed `response` object (a native JSON answer). */
export function recordAnswer(call: CallContext, deps: PipelineDeps, answer: unknown): void {
  record(call, deps, (answer as { id?: unknown } | null)?.id);
}

/**
 * `reader` that also records the response id a stream names in `response.created` (and, should that be
 * missing, `response.completed`/`.incomplete`/`.failed`): `response.id`.
 */
export function recordingReader(
  reader: NativeEventReader,
  call: CallContext,
  deps: PipelineDeps,
): NativeEventReader {
  let recorded = false;
  return {
    get completed() {
      return reader.completed;
    },
    read(event: NativeEvent): EventText {
      const json = event.json;
      if (
        !recorded &&
        json !== undefined &&
        typeof json.type === "string" &&
        json.type.startsWith("response.")
      ) {
        const id = (json.response as { id?: unknown } | undefined)?.id;
        if (typeof id === "string") {
          recorded = true;
          record(call, deps, id);
        }
      }
      return reader.read(event);
    },
    usage: (outputTokens) => reader.usage(outputTokens),
    cut: (usage) => reader.cut(usage),
    error: (status, type, message) => reader.error(status, type, message),
    mask: (json, texts, piece) => reader.mask(json, texts, piece),
  };
}
