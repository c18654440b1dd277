/**
 * An endpoint description: what the pipeline needs to know about one model API (`/v1/chat/completions`,
 * `/v1/embeddings`, …) to run its steps (parse → resolve → authorize → admit → guard input → send → answer →
 * account) for it. Each endpoint is a folder under `endpoints/` exporting one {@link Endpoint} and registering
 * it with {@link pipelineRoute} (`pipeline/route.ts`); nothing in the pipeline names an endpoint.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { OutputRequest } from "../cost/reservation.js";
import type { TextExtractor } from "../guardrails/types.js";
import type { CachedAnswer } from "../response-cache/types.js";
import type { UpstreamResponse } from "../router/router.js";
import type { CallContext, CallType, EndpointBody, PipelineDeps } from "./types.js";

/** One model API served by the pipeline. `B` is its validated request body. */
export interface Endpoint<B extends EndpointBody = EndpointBody> {
  /**
   * The URLs it answers (`POST`), the canonical one first, e.g. `["/v1/embeddings", "/embeddings"]`; the
   * canonical one is the `route` label of its requests in the request counters, whichever URL was called.
   */
  readonly paths: readonly string[];
  /** The spend row's `call_type`. */
  readonly callType: CallType;
  /**
   * The upstream charges nothing for a call (Anthropic's `count_tokens`): it counts against rate limits and is
   * refused once a budget is spent, but reserves and books nothing.
   */
  readonly free?: boolean;
  /** Whether the chat's service key may book calls on the chat user it names (`users/attribution.ts`). */
  readonly userAttribution?: boolean;
  /**
   * Route settings of an endpoint that speaks another vendor's API: its errors in that API's shape
   * (`errorFormat`, `errors/error-handler.ts`) and its key also accepted in the `x-api-key` header
   * (`apiKeyHeader`, `plugins/auth.ts`). Default: OpenAI's errors, `Authorization: Bearer` only.
   */
  readonly routeConfig?: { errorFormat?: "anthropic"; apiKeyHeader?: boolean };
  /**
   * Validates the parsed JSON body.
   * @throws GatewayError 400 `invalid_request_error` naming the first invalid field.
   */
  parse(raw: unknown): B;
  /** The model's input as the client sent it, from fastify's parsed body (`CallContext.clientInput`). */
  clientInput(raw: Record<string, unknown>): unknown;
  /** The client asked for a stream. */
  isStream(body: B): boolean;
  /**
   * What the request asks of the output, for the reservation (`cost/reservation.ts`): its own cap per choice
   * (tokens; undefined when it sets none; 0 for an endpoint that produces no tokens, embeddings) and the number of
   * answers generated (`n`, `best_of`, …; 1 for an API without them).
   */
  output(body: B): OutputRequest;
  /** Every text of a request a model reads, for the input guardrails. */
  readonly inputTexts: TextExtractor;
  /**
   * Refusals that need neither an upstream nor the limits (the model serves no such API, a `previous_response_id`
   * that is not the caller's, …), run after the authorize step and before admission, so that such a refusal
   * counts against no rate limit and reaches no guardrail.
   * @throws GatewayError the endpoint's refusal.
   */
  precheck?(call: CallContext<B>, deps: PipelineDeps): void | Promise<void>;
  /**
   * The send step: calls the upstream through `deps.router` and sets `call.upstream`.
   * @throws GatewayError the router's mapped failure, or the abort reason when the client left.
   */
  send(call: CallContext<B>, deps: PipelineDeps): Promise<UpstreamResponse>;
  /**
   * The answer step: the upstream's answer to the client, then settled through `steps/account.ts` (a JSON
   * answer returns the sent reply; a stream hijacks the reply and counts itself).
   */
  answer(
    call: CallContext<B>,
    upstream: UpstreamResponse,
    deps: PipelineDeps,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<unknown>;
  /** How the response cache serves the endpoint (`response-cache/`); absent: its calls are never cached. */
  readonly cache?: EndpointCache<B>;
}

/** The response cache's view of one endpoint. */
export interface EndpointCache<B extends EndpointBody = EndpointBody> {
  /** Whether a request may be cached at all (Responses: only `store: false`); default every request. */
  eligible?(body: B): boolean;
  /**
   * Answers a hit (`steps/cache-replay.ts`): the entry's answer as the endpoint's JSON, or, for a stream, replayed
   * as the endpoint's own event stream. Returns the sent reply (JSON) or nothing once the stream ended; the
   * replay step books the call.
   */
  replay(
    call: CallContext<B>,
    entry: CachedAnswer,
    deps: PipelineDeps,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<unknown>;
  /**
   * What tracing records as a hit's output, read from the entry's answer (stored in the endpoint's JSON shape):
   * the endpoint's `JsonAnswerFormat.output`. Absent: a hit records none (embeddings record no output either).
   */
  output?(answer: Record<string, unknown>): unknown;
}
