/**
 * Parse step: the JSON body (already parsed by fastify) → the endpoint's validated body, the token estimates the
 * budget reservation uses, and the call's {@link CallContext}.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { callerLabels } from "../../accounting/call-accounting.js";
import { estimatePromptTokens, estimatePromptTokensOfText } from "../../cost/estimate.js";
import { DEFAULT_MAX_OUTPUT_TOKENS } from "../../cost/reservation.js";
import { CallAbort } from "../../router/call-abort.js";
import type { Clock } from "../../time/clock.js";
import type { Endpoint } from "../endpoint.js";
import type { CallContext, EndpointBody } from "../types.js";

/** A switch aborted when the client goes away before the response is complete. */
function clientAbort(reply: FastifyReply): CallAbort {
  const controller = new CallAbort();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) controller.abort(new Error("client disconnected"));
  });
  return controller;
}

/** A single header value, or undefined when absent, empty or repeated. */
function headerValue(value: string | string[] | undefined): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * Validates the body and opens the call's context. Must run after authentication (`request.auth` set).
 * @throws GatewayError 400 `invalid_request_error` naming the first invalid field.
 */
export function parse<B extends EndpointBody>(
  request: FastifyRequest,
  reply: FastifyReply,
  clock: Clock,
  endpoint: Endpoint<B>,
): CallContext<B> {
  const startedAt = performance.now();
  const startedAtEpoch = clock.now();
  const body = endpoint.parse(request.body);
  const auth = request.auth!;
  const output = endpoint.output(body);
  return {
    requestId: request.id,
    auth,
    labels: callerLabels(auth),
    callType: endpoint.callType,
    startedAt,
    startedAtEpoch,
    body,
    clientInput: endpoint.clientInput(request.body as Record<string, unknown>),
    inputOf: endpoint.clientInput,
    json: request.jsonText,
    sessionId: headerValue(request.headers["x-session-id"]),
    stream: endpoint.isStream(body),
    promptEstimate:
      request.jsonText === undefined
        ? estimatePromptTokens(body)
        : estimatePromptTokensOfText(request.jsonText.text),
    free: endpoint.free === true,
    outputRequest: output,
    completionEstimate: (output.cap ?? DEFAULT_MAX_OUTPUT_TOKENS) * output.choices,
    outputLimit: Number.POSITIVE_INFINITY,
    reservation: undefined,
    model: undefined,
    route: undefined,
    admission: undefined,
    decisions: [],
    abort: clientAbort(reply),
    upstream: undefined,
    cost: 0,
    usage: undefined,
    firstByteAtEpoch: undefined,
    output: undefined,
    upstreamOutput: undefined,
    cache: undefined,
  };
}
