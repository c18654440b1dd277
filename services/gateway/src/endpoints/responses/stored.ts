/**
 * The Responses API's routes on a stored response (OpenAI API reference: "Get a model response" `GET
 * /v1/responses/{response_id}`, "Delete a model response" `DELETE …`, "Cancel a response" `POST …/cancel`, "List
 * input items" `GET …/input_items`; also under `/responses`). The gateway keeps no responses itself; a native
 * upstream (OpenAI) stores them, and the gateway records who created each response it relayed and which
 * deployment served it (`response-owners/`). So:
 *
 * - the owner's request (the key that created it; the master key may use any) goes to that deployment, through
 *   the router and the provider adapter (`router/resource.ts`: the deployment's own key is added), with the
 *   client's query string; a success (a stream included) comes back as it is, a refusal as the gateway's error
 *   for an upstream's (`router/upstream-error.ts` `toClientError`: the provider key redacted, a refused provider
 *   key a 502 rather than the caller's 401);
 * - anyone else's, and a response the gateway did not relay or no longer remembers (after the upstream's 30-day
 *   retention), gets OpenAI's 404 for an unknown response: nothing tells another key's response from a missing one.
 *
 * These routes make no model call: they do not run the pipeline (no reservation, guardrails or request counters;
 * listed in `endpoints/index.ts`, `offPipelineRoutes`), but each counts against the key's rate limits. The key is
 * checked first (401 without one).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Admitter } from "../../limits/types.js";
import { mayUse, type ResponseOwners } from "../../response-owners/types.js";
import type { ResourceAnswer, ResourceRequest } from "../../router/resource.js";
import type { Router } from "../../router/router.js";
import { redact, toClientError, upstreamMessage } from "../../router/upstream-error.js";
import { shownId } from "./ownership.js";

/** OpenAI's 404 for a response it does not hold (given for one the caller does not own too). */
function noResponse(id: string): GatewayError {
  return new GatewayError(404, `No response found with id '${shownId(id)}'.`, {
    type: "invalid_request_error",
    code: "not_found",
  });
}

/** An upstream's refusal of a stored-response request, as the gateway answers any upstream's refusal. */
async function upstreamRefusal(answer: ResourceAnswer): Promise<GatewayError> {
  const { deployment } = answer;
  const text = await answer.body.text().catch(() => "");
  return toClientError(
    {
      kind: "status",
      status: answer.statusCode,
      message: redact(upstreamMessage(text), [deployment.apiKey]),
      target: `${deployment.provider}/${deployment.upstreamModel}`,
    },
    1,
  );
}

/** The stored-response operations: method, path below `{base}/{id}`. */
const OPERATIONS: ReadonlyArray<{ method: ResourceRequest["method"]; suffix: string }> = [
  { method: "GET", suffix: "" },
  { method: "DELETE", suffix: "" },
  { method: "GET", suffix: "/input_items" },
  { method: "POST", suffix: "/cancel" },
];

/** What the routes need: the router (to reach the deployment), the ownership registry and the limits. */
export interface StoredResponseDeps {
  router: Router;
  responseOwners?: ResponseOwners | undefined;
  /** Counts each request against the key's (and user's) rpm; undefined runs without limits. */
  admitter?: Admitter | undefined;
}

/**
 * Counts the request against the caller's rate limits, as a free call: nothing reserved, nothing booked (a spent
 * budget refuses it, as it refuses `count_tokens`). The master key is not limited.
 * @throws GatewayError 429 from the admitter.
 */
async function countRequest(request: FastifyRequest, admitter: Admitter | undefined): Promise<void> {
  const auth = request.auth!;
  if (auth.kind !== "virtual" || auth.subjects.length === 0 || admitter === undefined) return;
  const admission = await admitter.admit({
    subjects: auth.subjects,
    model: "",
    estimatedCost: 0,
    estimatedTokens: 0,
  });
  admission.settle({ cost: 0, totalTokens: 0 });
}

/**
 * Registers the stored-response routes under `/v1/responses` and `/responses`.
 * @throws GatewayError (answered) 404 `not_found` for a response the caller does not own; 502/504 when the
 *   deployment gives no answer; 503 when ownership cannot be read.
 */
export function storedResponseRoutes(app: FastifyInstance, deps: StoredResponseDeps): void {
  for (const { method, suffix } of OPERATIONS) {
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const id = String((request.params as { id?: unknown }).id ?? "");
      await countRequest(request, deps.admitter);
      const record = await deps.responseOwners?.lookup(id);
      if (!mayUse(request.auth!, record)) throw noResponse(id);
      const abort = new AbortController();
      reply.raw.once("close", () => {
        if (!reply.raw.writableFinished) abort.abort(new Error("client disconnected"));
      });
      const queryAt = request.url.indexOf("?");
      const answer = await deps.router.resource(
        record.deploymentId,
        {
          method,
          api: "responses",
          subpath: `/${encodeURIComponent(id)}${suffix}`,
          query: queryAt < 0 ? "" : request.url.slice(queryAt),
        },
        abort.signal,
      );
      // The deployment that stored it is no longer configured: the response cannot be reached.
      if (answer === undefined) throw noResponse(id);
      if (answer.statusCode >= 400) throw await upstreamRefusal(answer);
      const type = answer.headers["content-type"];
      return reply
        .code(answer.statusCode)
        .header("content-type", typeof type === "string" ? type : "application/json")
        .header("x-litellm-model-id", answer.deployment.id)
        .send(answer.body);
    };
    for (const base of ["/v1/responses", "/responses"])
      app.route({ method, url: `${base}/:id${suffix}`, handler });
  }
}
