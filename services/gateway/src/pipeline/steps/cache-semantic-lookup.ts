/**
 * Semantic cache lookup step (after admit and guard input, before send): for a call whose exact lookup missed
 * and that the semantic cache may answer (`call.cache.semanticLookup`), embeds its prompt as guarded (masked
 * text; a prompt the guard blocked never gets here) and looks up the nearest entry. Running after admission
 * means a caller the limits refuse spends nothing on embeddings, and that a hit was admitted like a call that
 * goes upstream: it counts one request against rpm, and its admission is settled at $0 by the replay step
 * (its reservation returned, no tokens counted).
 */
import type { FastifyBaseLogger } from "fastify";
import { cacheKey } from "../../response-cache/key.js";
import { semanticPrompt } from "../../response-cache/semantic/index.js";
import type { CachedAnswer, PendingSemanticLookup } from "../../response-cache/types.js";
import type { CallContext, PipelineDeps } from "../types.js";
import { countMiss, usableEntry } from "./cache-lookup.js";

/**
 * Embeds the request's prompt (`semanticPrompt` of the guarded body), keeps the embedding on
 * `call.cache.semantic` (a miss's answer is stored with it) and returns the nearest usable entry at or above
 * the threshold; counts the miss otherwise. An embedding call that fails is a miss (logged), never an error to
 * the client.
 * @returns the entry to answer with (a semantic hit, `call.cache.similarity` set), or undefined.
 */
export async function lookupSemanticCache(
  call: CallContext,
  deps: PipelineDeps,
): Promise<CachedAnswer | undefined> {
  const cache = deps.responseCache;
  const state = call.cache;
  const pending = state?.semanticLookup;
  if (cache?.semantic === undefined || state === undefined || pending === undefined) return undefined;
  delete state.semanticLookup;
  const match = await nearest(call, deps, pending.keyParts, deps.log);
  if (match !== undefined && usableEntry(call, cache, match.entry, pending.maxAgeMs)) {
    state.similarity = match.similarity;
    return match.entry;
  }
  countMiss(call, cache);
  return undefined;
}

async function nearest(
  call: CallContext,
  deps: PipelineDeps,
  keyParts: PendingSemanticLookup["keyParts"],
  log: FastifyBaseLogger,
) {
  const semantic = deps.responseCache!.semantic!;
  const prompt = semanticPrompt(call.callType, call.body);
  if (prompt === undefined) return undefined;
  let vector: number[];
  try {
    vector = await semantic.embed(prompt.text, call.abort);
  } catch (error) {
    if (!call.abort.aborted)
      log.warn(
        { err: error, request_id: call.requestId },
        "semantic cache: the embedding call failed; looked up as a miss",
      );
    return undefined;
  }
  const filterKey = cacheKey({ ...keyParts, body: prompt.exactPart });
  call.cache!.semantic = { filterKey, scope: keyParts.scope, vector };
  return semantic.nearest(filterKey, vector);
}
