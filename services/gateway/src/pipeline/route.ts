/**
 * Registers an {@link Endpoint} on the app: its handler is the pipeline's named steps, parse → resolve →
 * authorize → the endpoint's precheck → cache lookup (an exact hit: cache replay, and done) → admit → guard
 * input → semantic cache lookup (a hit: cache replay, and done) → send → answer (which settles through the account step, then the cache store step), the same for every
 * endpoint. A refusal or failure after admit releases the budget reservation (a settled one is not touched: an
 * admission finishes once).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { capHeader, OUTPUT_CAP_HEADER } from "../cost/reservation.js";
import type { Endpoint } from "./endpoint.js";
import { observerHeaders } from "./observers.js";
import { clientLeft, finish } from "./steps/account.js";
import { admit } from "./steps/admit.js";
import { authorize } from "./steps/authorize.js";
import { lookupCache } from "./steps/cache-lookup.js";
import { answerFromCache } from "./steps/cache-replay.js";
import { lookupSemanticCache } from "./steps/cache-semantic-lookup.js";
import { decisionHeaders } from "./steps/decision-headers.js";
import { guardInput } from "./steps/guard-input.js";
import { parse } from "./steps/parse.js";
import { resolve } from "./steps/resolve.js";
import type { CallContext, EndpointBody, PipelineDeps } from "./types.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The model call being answered, once parsed. */
    call: CallContext | undefined;
    /** The handler counted the request itself (a stream, or a client that left): the onResponse hook skips it. */
    countedByHandler: boolean;
  }
  interface FastifyContextConfig {
    /** A model route run by the pipeline (`pipelineRoute`): its requests are counted by the pipeline. */
    pipeline?: boolean;
    /**
     * The endpoint's canonical path (`Endpoint.paths[0]`, e.g. `/v1/responses`): the `route` label of the
     * request counters, the same for every URL the endpoint answers.
     */
    route?: string;
  }
}

/**
 * Decorates the app for the pipeline's routes and counts every request they answer (streams and abandoned calls
 * count themselves). Call once per app, before {@link pipelineRoute}.
 */
export function pipelineHooks(app: FastifyInstance, deps: PipelineDeps): void {
  app.decorateRequest("countedByHandler", false);
  app.decorateRequest("call", undefined);
  app.addHook("onResponse", async (request, reply) => {
    if (!request.countedByHandler && request.routeOptions.config.pipeline === true)
      finish(deps, request, reply.statusCode, request.errorType);
  });
}

/** Registers `endpoint`'s paths (`POST`) with the pipeline's handler. */
export function pipelineRoute<B extends EndpointBody>(
  app: FastifyInstance,
  endpoint: Endpoint<B>,
  deps: PipelineDeps,
): void {
  async function handler(request: FastifyRequest, reply: FastifyReply) {
    const call = parse(request, reply, deps.clock, endpoint);
    request.call = call as CallContext;
    // Observers' headers (x-trace-id) go on every answer from here on, refusals included.
    reply.headers(observerHeaders(deps.observers, call as CallContext));
    resolve(call, deps.router);
    authorize(call);
    await endpoint.precheck?.(call, deps);
    const cached = await lookupCache(call, endpoint, deps);
    if (cached !== undefined) return answerFromCache(call, cached, endpoint, deps, request, reply);
    await admit(call, deps.admitter);
    const cap = call.reservation?.cap;
    if (cap !== undefined) reply.header(OUTPUT_CAP_HEADER, capHeader(cap));
    try {
      await guardInput(call, deps.guard, endpoint.inputTexts);
      const similar = await lookupSemanticCache(call, deps);
      if (similar !== undefined) {
        reply.removeHeader(OUTPUT_CAP_HEADER); // a hit is not capped: it is replayed whole
        return await answerFromCache(call, similar, endpoint, deps, request, reply, { admitted: true });
      }
      const upstream = await endpoint.send(call, deps);
      return await endpoint.answer(call, upstream, deps, request, reply);
    } catch (error) {
      call.admission?.release();
      if (call.abort.aborted) return clientLeft(deps, request, reply);
      if (!reply.sent) reply.headers(decisionHeaders(call.decisions));
      throw error;
    }
  }
  const config = {
    ...endpoint.routeConfig,
    pipeline: true,
    route: endpoint.paths[0],
    userAttribution: endpoint.userAttribution === true,
  };
  for (const url of endpoint.paths) app.post(url, { config }, handler);
}
