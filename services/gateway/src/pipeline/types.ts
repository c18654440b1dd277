/**
 * The types every endpoint's pipeline shares, in one module the steps and the endpoints import:
 *
 * - {@link CallContext}: one call's state, made by the parse step and filled in step by step;
 * - {@link PipelineDeps}: what the steps are built from;
 * - the seams other features plug into: guardrails (`CallGuard`, declared below the pipeline in
 *   `guardrails/types.ts` and implemented there) and observers of finished calls ({@link CallObserver}, e.g.
 *   tracing). `buildApp(deps)` takes them as `guard` and `observers`; the pipeline calls them at fixed steps:
 *   `guard.checkInput` after admission, before the upstream call (`steps/guard-input.ts`); `guard.checkOutput` /
 *   `guard.streamOutput` on the answer (`steps/answer-stream.ts`, `steps/answer-native.ts`); `observer.onCallFinished` once per call that got past
 *   parsing, after the response (`steps/account.ts`).
 *
 * Shared types live at the level of their lowest user: `Usage` in `usage/types.ts`, `CallerLabels` in
 * `metrics/metrics.ts`, the guard seam in `guardrails/types.ts`.
 */
import type { FastifyBaseLogger } from "fastify";
import type { AuthContext } from "../auth/types.js";
import type { Deployment } from "../config/types.js";
import type { OutputRequest, Reservation } from "../cost/reservation.js";
import type { CallGuard, GuardDecision } from "../guardrails/types.js";
import type { Admission, Admitter } from "../limits/types.js";
import type { CallerLabels, GatewayMetrics } from "../metrics/metrics.js";
import type { JsonText } from "../plugins/json-body.js";
import type { ResponseCache } from "../response-cache/index.js";
import type { CallCacheState } from "../response-cache/types.js";
import type { ResponseOwners } from "../response-owners/types.js";
import type { CallAbort } from "../router/call-abort.js";
import type { RoutePlan } from "../router/route-plan.js";
import type { Router, UpstreamResponse } from "../router/router.js";
import type { SpendRecorder } from "../spend/types.js";
import type { Clock } from "../time/clock.js";
import type { Usage } from "../usage/types.js";

/**
 * LiteLLM's `call_type` of a spend row (`LiteLLM_SpendLogs.call_type`, LiteLLM's `CallTypes` enum): the async
 * name of the SDK function the route maps to.
 */
export type CallType =
  | "acompletion"
  | "aresponses"
  | "aembedding"
  | "atext_completion"
  | "anthropic_messages"
  // Anthropic's token counting (`/v1/messages/count_tokens`): the gateway's name; no spend row is written for it.
  | "count_tokens";

/**
 * A request body once its endpoint validated it: the alias it asks for, and the rest as the endpoint's schema
 * says (see each endpoint's `schema.ts`).
 */
export interface EndpointBody {
  model: string;
  [field: string]: unknown;
}

/** Everything the pipeline's steps use besides the call itself. */
export interface PipelineDeps {
  router: Router;
  metrics: GatewayMetrics;
  clock: Clock;
  /** Rate limits and budgets; undefined runs without (no virtual keys). */
  admitter: Admitter | undefined;
  spend: SpendRecorder | undefined;
  /** Guardrails, when configured. */
  guard: CallGuard | undefined;
  observers: readonly CallObserver[];
  /** Some observer wants the answer's content (`CallContext.output`); streams collect their text then. */
  collectOutput: boolean;
  log: FastifyBaseLogger;
  /** A stream is ended (with an error event) after this long, ms (0: never); default {@link DEFAULT_MAX_STREAM_DURATION_MS}. */
  maxStreamDurationMs?: number;
  /**
   * Who owns the Responses-API responses relayed from native upstreams (`response-owners/`); `buildApp` always
   * gives one. Absent: no response is recorded and a virtual key's `previous_response_id` is refused.
   */
  responseOwners?: ResponseOwners;
  /**
   * A stream whose client reads nothing for this long is ended and its upstream aborted, ms
   * (`general_settings.stream_client_idle_timeout`; default 60 s, streaming/client-flow.ts).
   */
  streamClientIdleTimeoutMs?: number;
  /**
   * The exact response cache (`litellm_settings.cache: true`; `response-cache/`); absent: no lookup, no store,
   * nothing computed per request.
   */
  responseCache?: ResponseCache;
}

/** The longest a stream may run, ms (`GATEWAY_MAX_STREAM_DURATION_MS`): 30 minutes. */
export const DEFAULT_MAX_STREAM_DURATION_MS = 30 * 60_000;

/**
 * One call on its way through the pipeline's steps, for any endpoint (`B`: its validated body). Times are
 * `performance.now()` ms unless noted.
 */
export interface CallContext<B extends EndpointBody = EndpointBody> {
  /** The request id (`x-request-id`). */
  readonly requestId: string;
  readonly auth: AuthContext;
  /** The caller's metric labels. */
  readonly labels: CallerLabels;
  /** LiteLLM's `call_type` of the endpoint, for the spend row. */
  readonly callType: CallType;
  /** When the request arrived. */
  readonly startedAt: number;
  /** Epoch ms when the request arrived (spend log times). */
  readonly startedAtEpoch: number;
  /** The validated request. The input guard may rewrite its texts (masking) before it is sent. */
  body: B;
  /**
   * The model's input exactly as the client sent it (fastify's parsed body; validation and guards work on
   * copies): chat's `messages`, Responses' `input`, …, per the endpoint's `clientInput`. For observers that
   * record the original input (tracing with `TRACE_CAPTURE_CONTENT=full`).
   */
  readonly clientInput: unknown;
  /** The endpoint's reader of the model's input in a body (`call.inputOf(call.body)`: what was sent upstream). */
  readonly inputOf: (body: Record<string, unknown>) => unknown;
  /** The client's conversation id (`x-session-id` header; the chat sends LibreChat's), for traces. */
  readonly sessionId: string | undefined;
  /**
   * The body's JSON text as the client sent it, while it may still go upstream in place of a serialised `body`
   * (`forward-json.ts`); the input guard step drops it unless the guard says it left `body` as it was.
   */
  json: JsonText | undefined;
  /** The client asked for a stream. */
  readonly stream: boolean;
  /** Prompt tokens estimated from the body's bytes (tokens; `cost/estimate.ts`), for rate limits and routing. */
  readonly promptEstimate: number;
  /** The upstream charges nothing for the call (endpoint `free`, e.g. `count_tokens`): nothing is reserved. */
  readonly free: boolean;
  /** What the request asks of the output: its own cap per choice and how many choices (endpoint `output`). */
  readonly outputRequest: OutputRequest;
  /**
   * Output tokens rate limits and routing expect of the call, all choices (tokens): the cap the upstream is sent
   * (the request's, else the one the gateway adds), else the default; set by the admit step. The budget
   * reservation's worst case is `reservation.completionTokens`.
   */
  completionEstimate: number;
  /**
   * Output tokens a stream may relay before it is cut (tokens): the reservation's when the request sets its own
   * cap or a budget is in force, else unbounded (admit step). Without a cap of the client's own, a stream that
   * reaches it asks the budgets for more first (`withTopUp`, admit step).
   */
  outputLimit: number;
  /** The budget reservation (admit step; `cost/reservation.ts`), with the output cap the send step adds, if any. */
  reservation: Reservation | undefined;
  /**
   * The requested alias once the resolve step found it registered; undefined before (or when it is unknown).
   * Metric labels use this, never `body.model`, so a client cannot mint label values.
   */
  model: string | undefined;
  /**
   * Every deployment the call may be sent to, the alias's then its fallbacks', narrowed to what the caller may use
   * (resolve and authorize steps); the send step tries only these aliases.
   */
  route: RoutePlan | undefined;
  /** The budget reservation and rate-limit counts (admit step); settled or released exactly once. */
  admission: Admission | undefined;
  /** Guardrail decisions so far, input then output. */
  decisions: GuardDecision[];
  /**
   * Aborted when the client goes away before the answer is complete. Read `abort.aborted`; `abort.signal` makes
   * an AbortSignal on first use.
   */
  readonly abort: CallAbort;
  /** The upstream response that is being answered (send step). */
  upstream: UpstreamResponse | undefined;
  /** Set by the account step: USD (rounded to 1e-10) and the tokens counted. */
  cost: number;
  usage: Usage | undefined;
  /** Epoch ms of the answer's first byte from the upstream (time to first token); set by the answer step. */
  firstByteAtEpoch: number | undefined;
  /**
   * The answer's content as the client got it (after the output guard), when `ChatDeps.collectOutput`: a
   * completion's first `message`, or a stream's concatenated `delta.content` text (capped). Undefined otherwise.
   */
  output: unknown;
  /** The answer's content as the upstream gave it, when it differs from `output` (an output guard rewrote it). */
  upstreamOutput: unknown;
  /** The response cache's state of the call (cache-lookup step), when the call is cacheable. */
  cache: CallCacheState | undefined;
}

/** What happened to a finished call, for {@link CallObserver}s. */
export interface CallResult {
  /** The status recorded: the HTTP status, or 499 when the client left before the answer was complete. */
  status: number;
  /** OpenAI error `type` of a failed call (`upstream_error`, `budget_exceeded`, …). */
  errorType?: string;
  /** USD, rounded to 1e-10; 0 when the call never reached an upstream. */
  cost: number;
  /** Tokens counted (the upstream's usage, or the gateway's estimate when it sent none). */
  usage?: Usage;
  /** The deployment that answered, when one did. */
  deployment?: Deployment;
  /** From arrival to the last byte sent, ms. */
  durationMs: number;
}

/** Tracing / observers seam: called once per finished call, after the response, off the hot path. */
export interface CallObserver {
  /** Must not throw (a throw is logged and ignored); must not block (queue work instead). */
  onCallFinished(call: CallContext, result: CallResult): void;
  /** Headers this observer adds to the call's response (e.g. `x-trace-id`); called once the call is parsed. */
  responseHeaders?(call: CallContext): Record<string, string>;
  /** This observer reads `call.output` (the answer's content): the answer step collects it then. */
  readonly wantsOutput?: boolean;
}
