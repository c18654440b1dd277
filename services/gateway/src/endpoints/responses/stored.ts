/**
 * The Responses API's routes on a stored response (OpenAI API reference: "Get a model response" `GET
 * /v1/responses/{response_id}`, "Delete a model response" `DELETE …`, "Cancel a response" `POST …/cancel`, "List
 * input items" `GET …/input_items`), answered with a clear 404 instead of a generic route-not-found: the gateway
 * keeps no response state (`store` is not kept here), and it cannot tell which upstream deployment holds a
 * response an upstream stored, so it passes none of these through. The key is checked first (401 without one).
 */
import type { FastifyInstance } from "fastify";
import { GatewayError } from "../../errors/gateway-error.js";

/** Longest response id quoted back in the message, characters. */
const MAX_ID_CHARS = 100;

/** The 404 for a stored-response route on `id`. */
function notStored(id: string): GatewayError {
  const shown = id.length > MAX_ID_CHARS ? `${id.slice(0, MAX_ID_CHARS)}…` : id;
  return new GatewayError(
    404,
    `Response '${shown}' is not stored by this gateway: it keeps no responses (store is not kept here), so responses cannot be retrieved, deleted, cancelled or listed through it. Keep what you need from the response you received; to continue a conversation, send it in full as input, or use previous_response_id with a model whose upstream serves the Responses API natively (the upstream keeps its own state).`,
    { type: "invalid_request_error", param: "response_id", code: "response_not_stored" },
  );
}

/** Registers the stored-response routes under `/v1/responses` and `/responses`. */
export function storedResponseRoutes(app: FastifyInstance): void {
  const answer = async (request: { params: unknown }) => {
    throw notStored(String((request.params as { id?: unknown }).id ?? ""));
  };
  for (const base of ["/v1/responses", "/responses"]) {
    app.get(`${base}/:id`, answer);
    app.delete(`${base}/:id`, answer);
    app.get(`${base}/:id/input_items`, answer);
    app.post(`${base}/:id/cancel`, answer);
  }
}
