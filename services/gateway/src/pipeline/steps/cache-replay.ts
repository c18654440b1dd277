/**
 * Cache replay step: a call whose entry the exact lookup step found is admitted as a request (rpm; no
 * reservation; a semantic hit was admitted before its lookup, and its reservation is returned when it is booked),
 * answered by its endpoint's replay (the stored JSON, or the endpoint's own event stream for `stream: true`),
 * and booked at $0: its spend row has `cache_hit` and the cost the entry saved, the cache metrics count the hit,
 * and the observers (tracing) see `call.cache.hit`.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { CachedAnswer } from "../../response-cache/types.js";
import type { Endpoint, EndpointCache } from "../endpoint.js";
import { observerHeaders } from "../observers.js";
import type { CallContext, EndpointBody, PipelineDeps } from "../types.js";
import {
  CLIENT_CLOSED_REQUEST,
  CLIENT_CLOSED_TYPE,
  finish,
  requestedModelLabel,
  unbilledRow,
} from "./account.js";
import { admitCacheHit } from "./admit.js";
import { cacheKeyHeader } from "./cache-lookup.js";

/**
 * Answers `call` with `entry` (see the module comment). `admitted`: the call went through the admit step
 * already (a semantic hit), so it is not admitted again.
 * @throws GatewayError 429 when a rate limit (or a spent budget) refuses the request.
 */
export async function answerFromCache<B extends EndpointBody>(
  call: CallContext<B>,
  entry: CachedAnswer,
  endpoint: Endpoint<B>,
  deps: PipelineDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  options: { admitted: boolean } = { admitted: false },
): Promise<unknown> {
  if (!options.admitted) await admitCacheHit(call, deps.admitter);
  const state = call.cache!;
  state.hit = true;
  state.savedCost = entry.cost;
  call.cost = 0;
  call.usage = entry.usage;
  // The trace's output: what the client gets (the stored answer is what the first client got, output-guarded).
  if (deps.collectOutput) call.output = endpoint.cache!.output?.(entry.answer);
  try {
    const sent = await endpoint.cache!.replay(call, entry, deps, request, reply);
    bookCacheHit(call, entry, deps, call.abort.aborted ? CLIENT_CLOSED_REQUEST : 200);
    return sent;
  } catch (error) {
    call.admission?.release();
    throw error;
  }
}

/** Settles the admission at $0 (a reservation held is returned), records the hit's spend row and counts it in the cache metrics. */
function bookCacheHit(call: CallContext, entry: CachedAnswer, deps: PipelineDeps, status: number): void {
  call.admission?.settle({ cost: 0, totalTokens: 0 });
  const cache = deps.responseCache!;
  const labels = { model: requestedModelLabel(call), call_type: call.callType };
  cache.metrics.hits.inc(labels);
  cache.metrics.cachedTokens.inc(labels, entry.usage.total_tokens);
  if (entry.cost > 0) cache.metrics.savedSpend.inc(labels, entry.cost);
  deps.spend?.record({
    ...unbilledRow(call, deps, status),
    modelGroup: requestedModelLabel(call),
    model: entry.model,
    deploymentId: entry.deploymentId,
    promptTokens: entry.usage.prompt_tokens,
    completionTokens: entry.usage.completion_tokens,
    totalTokens: entry.usage.total_tokens,
    cacheHit: true,
    cacheKey: call.cache!.key,
    cacheSavedSpend: entry.cost,
  });
}

/** A hit's JSON answer: the stored answer, `x-litellm-response-cost: 0` and the cache key. */
function sendCachedJson(
  call: CallContext,
  entry: CachedAnswer,
  deps: PipelineDeps,
  reply: FastifyReply,
): FastifyReply {
  call.firstByteAtEpoch = deps.clock.now();
  return reply
    .header("content-type", "application/json")
    .header("x-litellm-response-cost", "0")
    .headers(cacheKeyHeader(call))
    .send(JSON.stringify(entry.answer));
}

/**
 * A hit replayed as a stream: `frames` are the endpoint's whole server-sent events (`event: …\ndata: …\n\n`),
 * written at once after the stream's headers; the request is counted here (the reply is hijacked).
 */
async function sendCachedStream(
  call: CallContext,
  deps: PipelineDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  frames: readonly string[],
  contentType = "text/event-stream; charset=utf-8",
): Promise<void> {
  reply.hijack();
  request.countedByHandler = true;
  const res = reply.raw;
  res.writeHead(200, {
    "content-type": contentType,
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    "x-request-id": request.id,
    "x-litellm-response-cost": "0",
    ...cacheKeyHeader(call),
    ...observerHeaders(deps.observers, call),
  });
  call.firstByteAtEpoch = deps.clock.now();
  await new Promise<void>((resolve) => {
    res.once("close", resolve);
    res.end(frames.join(""));
  });
  const left = !res.writableFinished;
  finish(deps, request, left ? CLIENT_CLOSED_REQUEST : 200, left ? CLIENT_CLOSED_TYPE : undefined);
}

/**
 * An endpoint's `cache.replay` ({@link EndpointCache}): the stored JSON for a JSON request, else the events
 * `frames` makes of the stored answer, as a stream.
 */
export function replayAnswer<B extends EndpointBody>(
  frames: (call: CallContext<B>, answer: Record<string, unknown>) => readonly string[],
): EndpointCache<B>["replay"] {
  return async (call, entry, deps, request, reply) => {
    if (!call.stream) return sendCachedJson(call, entry, deps, reply);
    return sendCachedStream(call, deps, request, reply, frames(call, entry.answer));
  };
}
