/**
 * How the gateway ends a stream it cuts short: the closing events of a stream stopped at its reservation
 * (OpenAI's own shape for a length stop: a chunk whose choices carry `finish_reason: "length"` and an empty
 * `delta`, then the usage-only chunk when the client asked for `stream_options.include_usage`, then `[DONE]`),
 * and the error event of a stream that failed or timed out after its headers were sent (the OpenAI error
 * object as the `data:` of one event; no `[DONE]` follows, so clients see the stream did not finish).
 */
import type { Usage } from "../usage/types.js";

/** A stream ended by the gateway's own clock: the idle timeout between chunks or the maximum duration. */
export class StreamTimeoutError extends Error {
  override readonly name = "StreamTimeoutError";
}

/** The fields every chunk of one stream repeats (`id`, `object`, `created`, `model`), from its last chunk. */
export interface ChunkHead {
  id?: unknown;
  object?: unknown;
  created?: unknown;
  model?: unknown;
  system_fingerprint?: unknown;
}

/** The head fields of a parsed chunk, to repeat on the chunks the gateway adds. */
export function chunkHead(chunk: ChunkHead): ChunkHead {
  const { id, object, created, model, system_fingerprint } = chunk;
  return { id, object, created, model, ...(system_fingerprint === undefined ? {} : { system_fingerprint }) };
}

/**
 * The payloads that close a stream stopped at its reservation: a chunk giving each choice seen (by `index`)
 * `finish_reason: "length"` (in a `text_completion` stream, with an empty `text` instead of an empty `delta`), the usage chunk when `usage` is given, and `[DONE]`.
 */
export function lengthStop(head: ChunkHead, choices: readonly number[], usage: Usage | undefined): string[] {
  const indexes = choices.length === 0 ? [0] : choices;
  const stop = {
    ...head,
    // A legacy completion's chunk (`text_completion`) carries `text` where a chat chunk carries `delta`.
    choices: indexes.map((index) =>
      head.object === "text_completion"
        ? { index, text: "", logprobs: null, finish_reason: "length" }
        : { index, delta: {}, finish_reason: "length" },
    ),
  };
  const out = [JSON.stringify(stop)];
  if (usage !== undefined) out.push(JSON.stringify({ ...head, choices: [], usage }));
  out.push("[DONE]");
  return out;
}

/** undici's error when no body data came within `bodyTimeout` (the deployment's stream timeout). */
function isBodyTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "UND_ERR_BODY_TIMEOUT";
}

/** Why a stream failed mid-way: its error `type`, HTTP-like `status` (504 timeout, 502 otherwise) and message. */
export interface StreamFailure {
  type: "timeout" | "upstream_error";
  status: 502 | 504;
  message: string;
}

/**
 * Classifies a stream that failed mid-way: `timeout` (504) when the idle timeout or the maximum duration ended
 * it (`idleTimeoutMs` is named in the message), else `upstream_error` (502). Each API writes it in its own shape.
 */
export function classifyStreamFailure(error: unknown, idleTimeoutMs: number | undefined): StreamFailure {
  if (error instanceof StreamTimeoutError) return { type: "timeout", status: 504, message: error.message };
  if (isBodyTimeout(error)) {
    const seconds = idleTimeoutMs === undefined ? "" : ` for ${idleTimeoutMs / 1000} s`;
    return {
      type: "timeout",
      status: 504,
      message: `The upstream sent nothing${seconds} (stream_timeout); the stream was ended.`,
    };
  }
  return { type: "upstream_error", status: 502, message: "The upstream stream failed before it finished." };
}

/** The chat completions error event's payload for a stream that failed mid-way ({@link classifyStreamFailure}). */
export function streamFailure(error: unknown, idleTimeoutMs: number | undefined): string {
  const { type, status, message } = classifyStreamFailure(error, idleTimeoutMs);
  return JSON.stringify({ error: { message, type, code: String(status), param: null } });
}

/** Whether {@link streamFailure} reports `error` as a timeout. */
export function isStreamTimeout(error: unknown): boolean {
  return error instanceof StreamTimeoutError || isBodyTimeout(error);
}
