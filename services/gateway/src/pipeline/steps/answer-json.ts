/**
 * Answer step for JSON answers in OpenAI's formats (any endpoint, told how to read its answer by a
 * {@link JsonAnswerFormat}): the answer is read whole, passed through the output guard, settled (its cost goes in
 * `x-litellm-response-cost`, the guard's decisions in `decision-headers.ts`' headers) and sent
 * ({@link answerJson}). A call sent as a stream because its deployment ignores output caps is assembled into
 * that JSON first ({@link readAssembled}).
 */
import type { FastifyReply } from "fastify";
import { formatCost } from "../../accounting/call-accounting.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { TextExtractor } from "../../guardrails/types.js";
import type { UpstreamResponse } from "../../router/router.js";
import { assembleJson } from "../../streaming/assemble-json.js";
import { OutputMeter, tokenizerFor } from "../../streaming/output-meter.js";
import { classifyStreamFailure } from "../../streaming/stream-end.js";
import type { Usage } from "../../usage/types.js";
import type { CallContext, PipelineDeps } from "../types.js";
import { book, measure, settle } from "./account.js";
import { withTopUp } from "./admit.js";
import { cacheKeyHeader } from "./cache-lookup.js";
import { storeAnswer } from "./cache-store.js";
import { decisionHeaders } from "./decision-headers.js";
import { streamDeadline } from "./relayed-stream.js";

/** How {@link answerJson} reads one endpoint's JSON answer. */
export interface JsonAnswerFormat {
  /**
   * The answer's usage in chat completions' names (tokens) with its breakdown (read by
   * `usage/provider-usage.ts`), undefined when it has none.
   */
  usage(answer: unknown): Usage | undefined;
  /** What tracing records as the output (a copy: the answer may still be rewritten), e.g. chat's first message. */
  output(answer: unknown): unknown;
  /** The model-written texts the output guard reads; undefined when the endpoint's answer has none (embeddings). */
  outputTexts?: TextExtractor;
  /**
   * Rewrites the upstream's parsed answer into the client's format before anything else reads it (a translating
   * endpoint: a chat completion into a Responses `response`); `usage`, `output` and `outputTexts` then read the
   * rewritten answer. Default: the upstream's answer and bytes go to the client as they are.
   */
  translate?(answer: unknown): unknown;
  /**
   * Told the answer the client is about to get (after the output guard passed it), just before it is sent; not
   * called for an answer the guard blocked. E.g. the Responses endpoint records the response's owner here.
   */
  answered?(answer: unknown): void;
  /**
   * The answer is whole and may be stored by the response cache (`steps/cache-store.ts`): not cut by a cap, not a
   * refusal. Absent: the endpoint's answers are never stored.
   */
  cacheable?(answer: Record<string, unknown>): boolean;
}

/** 502 for an upstream body that is not JSON. */
const notJson = () =>
  new GatewayError(502, "The upstream answered with a body that is not valid JSON.", {
    type: "upstream_error",
  });

/**
 * Answers a non-streamed call with the upstream's JSON, read as `format` says; a call sent as a stream because its
 * deployment ignores output caps is cut where its reservation (and its top-ups, as a relayed stream takes them) ends and assembled into that JSON first ({@link readAssembled}).
 * @throws GatewayError 502 when the upstream body is not JSON; whatever the output guard throws to block.
 */
export async function answerJson(
  call: CallContext,
  upstream: UpstreamResponse,
  deps: PipelineDeps,
  reply: FastifyReply,
  format: JsonAnswerFormat,
): Promise<FastifyReply> {
  let text: string;
  let completion: unknown;
  const assembled = upstream.assembled ? await readAssembled(call, upstream, deps) : undefined;
  if (assembled !== undefined) {
    call.firstByteAtEpoch = deps.clock.now();
    completion = assembled;
    text = JSON.stringify(assembled);
  } else {
    try {
      text = await upstream.body.text();
      call.firstByteAtEpoch = deps.clock.now();
      completion = JSON.parse(text);
    } catch (error) {
      if (call.abort.aborted) throw error;
      throw notJson();
    }
  }
  if (format.translate !== undefined) {
    completion = format.translate(completion);
    text = JSON.stringify(completion);
  }
  const guard = format.outputTexts === undefined ? undefined : deps.guard;
  // The answer before an output guard may rewrite it (tracing with TRACE_CAPTURE_CONTENT=full).
  if (deps.collectOutput && guard !== undefined) call.upstreamOutput = format.output(completion);
  let rewritten = false;
  if (guard !== undefined && format.outputTexts !== undefined) {
    try {
      const outcome = await guard.checkOutput(call, completion, format.outputTexts);
      call.decisions.push(...outcome.decisions);
      rewritten = outcome.rewritten === true;
    } catch (error) {
      // The upstream was used: the call is paid for even though the client gets the guard's refusal.
      const [status, reason] =
        error instanceof GatewayError ? [error.status, error.reason] : [500, "internal_error"];
      settle(call, deps, format.usage(completion), 0, status, reason);
      throw error;
    }
    // Serialised again only when the guard changed the answer; otherwise the upstream's own bytes are sent.
    if (rewritten) text = JSON.stringify(completion);
  }
  if (deps.collectOutput) {
    call.output = format.output(completion);
    if (!rewritten) call.upstreamOutput = undefined;
  }
  format.answered?.(completion);
  // The cost goes in a header; the booking (settle, metrics, spend row) waits until the answer is sent.
  const measured = measure(call, deps, format.usage(completion), 0);
  const sent = reply
    .header("content-type", "application/json")
    .header("x-litellm-response-cost", formatCost(measured.amounts.cost))
    .header("x-litellm-model-id", upstream.deployment.id)
    .headers(decisionHeaders(call.decisions))
    .headers(cacheKeyHeader(call))
    .send(text);
  book(call, deps, measured, 200);
  if (call.cache?.store === true && format.cacheable?.(completion as Record<string, unknown>) === true)
    storeAnswer(call, deps, completion as Record<string, unknown>, measured.amounts.cost);
  return sent;
}

/**
 * The assembled JSON answer of `upstream`, or undefined when the upstream answered with JSON after all (a server
 * that ignores `stream` too): the caller reads that body as JSON. The upstream's body is closed when this returns
 * (a cut stream's request is aborted, so the upstream stops generating).
 * @throws GatewayError 502/504 when the stream failed or timed out before it finished (what was read is booked
 *   first); the abort reason when the client left.
 */
export async function readAssembled(
  call: CallContext,
  upstream: UpstreamResponse,
  deps: PipelineDeps,
): Promise<Record<string, unknown> | undefined> {
  const contentType = String(upstream.headers["content-type"] ?? "");
  if (!/^\s*text\/event-stream\s*(;|$)/i.test(contentType)) return undefined;
  const meter = new OutputMeter(call.outputLimit, tokenizerFor(upstream.deployment.upstreamModel));
  const deadline = streamDeadline(upstream, deps);
  try {
    const { topUp } = withTopUp(call);
    const { answer } = await assembleJson(
      upstream.body,
      meter,
      call.promptEstimate,
      call.outputRequest.choices,
      topUp,
    );
    return answer;
  } catch (error) {
    if (call.abort.aborted) throw error;
    let failure = error;
    if (!(error instanceof GatewayError)) {
      const { status, message, type } = classifyStreamFailure(
        error,
        deps.router.streamTimeoutOf(upstream.deployment),
      );
      failure = new GatewayError(status, message, { type });
    }
    // The upstream was used: what it sent is paid for even though the client gets the error.
    settle(
      call,
      deps,
      undefined,
      meter.tokens,
      (failure as GatewayError).status,
      (failure as GatewayError).reason,
    );
    throw failure;
  } finally {
    clearTimeout(deadline);
    if (!upstream.body.destroyed) upstream.body.on("error", () => {}).destroy();
  }
}
