/**
 * The per-call state the chat steps share ({@link CallContext}) and what the steps are built from
 * ({@link ChatDeps}). A context is made by the parse step and filled in step by step; guards and observers
 * (see `hooks.ts`) receive it.
 */
import type { FastifyBaseLogger } from "fastify";
import type { CallerLabels } from "../accounting/call-accounting.js";
import type { AuthContext } from "../auth/types.js";
import type { Deployment } from "../config/types.js";
import type { Admission, Admitter } from "../limits/types.js";
import type { GatewayMetrics } from "../metrics/metrics.js";
import type { JsonText } from "../plugins/json-body.js";
import type { CallAbort } from "../router/call-abort.js";
import type { Router, UpstreamResponse } from "../router/router.js";
import type { ChatCompletionRequest } from "../schemas/chat-completion.js";
import type { SpendRecorder } from "../spend/types.js";
import type { Usage } from "../streaming/relay-sse.js";
import type { Clock } from "../time/clock.js";
import type { CallObserver, ChatGuard, GuardDecision } from "./hooks.js";

/** Everything the chat steps use besides the call itself. */
export interface ChatDeps {
  router: Router;
  metrics: GatewayMetrics;
  clock: Clock;
  /** Rate limits and budgets; undefined runs without (no virtual keys). */
  admitter: Admitter | undefined;
  spend: SpendRecorder | undefined;
  /** Guardrails, when configured. */
  guard: ChatGuard | undefined;
  observers: readonly CallObserver[];
  /** Some observer wants the answer's content (`CallContext.output`); streams collect their text then. */
  collectOutput: boolean;
  log: FastifyBaseLogger;
  /** A stream is ended (with an error event) after this long, ms (0: never); default {@link DEFAULT_MAX_STREAM_DURATION_MS}. */
  maxStreamDurationMs?: number;
}

/** The longest a stream may run, ms (`GATEWAY_MAX_STREAM_DURATION_MS`): 30 minutes. */
export const DEFAULT_MAX_STREAM_DURATION_MS = 30 * 60_000;

/** One chat completion call on its way through the steps. Times are `performance.now()` ms unless noted. */
export interface CallContext {
  /** The request id (`x-request-id`). */
  readonly requestId: string;
  readonly auth: AuthContext;
  /** The caller's metric labels. */
  readonly labels: CallerLabels;
  /** When the request arrived. */
  readonly startedAt: number;
  /** Epoch ms when the request arrived (spend log times). */
  readonly startedAtEpoch: number;
  /** The validated request. The input guard may rewrite its `messages` (masking) before it is sent. */
  body: ChatCompletionRequest;
  /**
   * `messages` exactly as the client sent them (fastify's parsed body; validation and guards work on copies),
   * for observers that record the original input (tracing with `TRACE_CAPTURE_CONTENT=full`).
   */
  readonly clientMessages: unknown;
  /** The client's conversation id (`x-session-id` header; the chat sends LibreChat's), for traces. */
  readonly sessionId: string | undefined;
  /**
   * The body's JSON text as the client sent it, while it may still go upstream in place of a serialised `body`
   * (`forward-json.ts`); the input guard step drops it unless the guard says it left `body` as it was.
   */
  json: JsonText | undefined;
  /** The client asked for a stream. */
  readonly stream: boolean;
  /** Prompt tokens estimated from the body's bytes (tokens; `cost/estimate.ts`). */
  readonly promptEstimate: number;
  /** Completion tokens the call may produce: `max_completion_tokens`, `max_tokens` or the default (tokens). */
  readonly completionEstimate: number;
  /**
   * The requested alias once the resolve step found it registered; undefined before (or when it is unknown).
   * Metric labels use this, never `body.model`, so a client cannot mint label values.
   */
  model: string | undefined;
  /** The alias's deployments (resolve step). */
  deployments: Deployment[];
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
}
