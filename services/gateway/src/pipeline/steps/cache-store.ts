/**
 * Cache store step (after the output guard, once the answer is sent): stores what the client received, when the
 * call may be stored (`call.cache.store`), its endpoint says the answer is whole (not cut by a cap or by the
 * gateway, not a refusal: the endpoint's `cacheable`) and its JSON is within `cache_params.max_entry_bytes`.
 * Errors, blocked answers and streams that did not finish never reach this step. The write is not awaited and
 * never fails the call.
 */
import { Readable } from "node:stream";
import type { CachedAnswer } from "../../response-cache/types.js";
import { assembleJson } from "../../streaming/assemble-json.js";
import { OutputMeter } from "../../streaming/output-meter.js";
import type { CallContext, PipelineDeps } from "../types.js";

/**
 * Stores `answer` (the endpoint's JSON answer as the client got it) for `call`, which cost `cost` USD.
 * Call it only for a 200 answer the endpoint's `cacheable` accepted.
 */
export function storeAnswer(
  call: CallContext,
  deps: PipelineDeps,
  answer: Record<string, unknown>,
  cost: number,
): void {
  const cache = deps.responseCache;
  const state = call.cache;
  const upstream = call.upstream;
  if (cache === undefined || state === undefined || !state.store || upstream === undefined) return;
  const usage = call.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const entry: CachedAnswer = {
    v: 1,
    callType: call.callType,
    answer,
    usage,
    cost,
    model: `${upstream.deployment.provider}/${upstream.deployment.upstreamModel}`,
    deploymentId: upstream.deployment.id,
    storedAt: cache.clock.now(),
  };
  const json = JSON.stringify(entry);
  if (Buffer.byteLength(json) > cache.settings.maxEntryBytes) return;
  void cache.store.set(state.storageKey, json, state.ttlSeconds);
  const semantic = state.semantic;
  if (cache.semantic !== undefined && semantic !== undefined)
    void cache.semantic.set(semantic.filterKey, semantic.scope, semantic.vector, json, state.ttlSeconds);
}

/**
 * Keeps the chat completion chunks (or text completion chunks) a stream relayed to its client, to store them
 * assembled into the JSON answer once the stream finished (`streaming/assemble-json.ts`).
 */
export class StreamCapture {
  private readonly payloads: string[] = [];
  private bytes = 0;
  private overflow = false;

  /** @param maxBytes past this many bytes of payloads the stream is not stored (`max_entry_bytes`). */
  constructor(private readonly maxBytes: number) {}

  /** The relay's `onPayload`: one `data:` payload written to the client. */
  readonly onPayload = (payload: string): void => {
    if (this.overflow) return;
    this.bytes += payload.length;
    if (this.bytes > this.maxBytes) {
      this.overflow = true;
      this.payloads.length = 0;
      return;
    }
    this.payloads.push(payload);
  };

  /**
   * The stream's JSON answer, with `usage` as booked (`call.usage`: the client may not have seen the usage chunk),
   * or undefined when it was too large or has no chunk.
   */
  async answer(call: CallContext): Promise<Record<string, unknown> | undefined> {
    if (this.overflow || this.payloads.length === 0) return undefined;
    const text = this.payloads.map((p) => `data: ${p}\n\n`).join("");
    try {
      const { answer } = await assembleJson(
        Readable.from([Buffer.from(text)]),
        new OutputMeter(Number.POSITIVE_INFINITY, undefined),
        call.promptEstimate,
        call.outputRequest.choices,
      );
      const usage = call.usage;
      if (usage !== undefined)
        answer.usage = {
          prompt_tokens: usage.prompt_tokens,
          completion_tokens: usage.completion_tokens,
          total_tokens: usage.total_tokens,
        };
      return answer;
    } catch {
      return undefined;
    }
  }
}

/** How a stream's answer is stored (`StreamAnswerOptions` of `steps/answer-stream.ts`). */
export interface StreamCacheFormat {
  /** The stored answer is whole (not cut, not a refusal): the endpoint's JSON rule. Absent: never stored. */
  cacheable?(answer: Record<string, unknown>): boolean;
  /**
   * A translating endpoint's answer from the stream's assembled chat completion (e.g. a Messages `message`): what
   * is stored, since a JSON request is answered with it. Default: the chat completion itself.
   */
  storedAs?(completion: Record<string, unknown>): unknown;
}

/** A capture of the stream's payloads when its answer may be stored, else undefined (nothing is kept). */
export function streamCapture(
  call: CallContext,
  deps: PipelineDeps,
  format: StreamCacheFormat,
): StreamCapture | undefined {
  if (call.cache?.store !== true || format.cacheable === undefined || deps.responseCache === undefined)
    return undefined;
  return new StreamCapture(deps.responseCache.settings.maxEntryBytes);
}

/** Stores a stream that finished whole (status 200, not cut), assembled, when `format.cacheable` accepts it. */
export async function storeStreamed(
  call: CallContext,
  deps: PipelineDeps,
  capture: StreamCapture,
  cost: number,
  format: StreamCacheFormat,
): Promise<void> {
  const assembled = await capture.answer(call);
  if (assembled === undefined) return;
  const answer = (format.storedAs?.(assembled) ?? assembled) as Record<string, unknown>;
  if (format.cacheable?.(answer) === true) storeAnswer(call, deps, answer, cost);
}
