/**
 * The seams other features plug into the chat path: guardrails ({@link ChatGuard}, implemented under
 * `services/gateway/src/guardrails/`) and observers of finished calls ({@link CallObserver}, e.g. tracing).
 * `buildApp(deps)` takes them as `guard` and `observers`; the chat route calls them at fixed steps:
 *
 * - `guard.checkInput` after admission, before the upstream call (`steps/guard-input.ts`);
 * - `guard.checkOutput` on a non-streamed answer, `guard.streamOutput` on a streamed one (`steps/answer.ts`);
 * - `observer.onCallFinished` once per call that got past parsing, after the response (`steps/account.ts`).
 *
 * Decision names follow LiteLLM's guardrails: `hook` is its `mode` / hook type (`pre_call`, `post_call`),
 * `guardrail` its `guardrail_name`; entity names are Presidio's (`EMAIL_ADDRESS`, `PHONE_NUMBER`, …).
 */
import type { Deployment } from "../config/types.js";
import type { GatewayError } from "../errors/gateway-error.js";
import type { Usage } from "../streaming/relay-sse.js";
import type { CallContext } from "./context.js";

/** Guardrails seam. Every method may be slow (a classifier, Presidio); the call waits for it. */
export interface ChatGuard {
  /**
   * Before the upstream call. May rewrite `call.body.messages` (masking) and returns its decisions, with
   * `rewritten: false` when it did not rewrite anything.
   * To block, throw a {@link GatewayError} (e.g. 400 `guardrail_violation`); push the blocking decision onto
   * `call.decisions` first so the response headers and the observers see it. The reservation is released.
   */
  checkInput(call: CallContext): Promise<GuardOutcome>;
  /**
   * A non-streamed answer: `completion` is the upstream's parsed JSON (an OpenAI `chat.completion` object).
   * May rewrite it in place (masking; say so with `rewritten: true`, and the client gets the rewritten object) or throw a {@link GatewayError} to
   * block (the client gets that error instead; the call is still paid for: the upstream was used).
   */
  checkOutput(call: CallContext, completion: unknown): Promise<GuardOutcome>;
  /** A streamed answer: a per-call {@link StreamOutputGuard}, or undefined when no output guard applies. */
  streamOutput(call: CallContext): StreamOutputGuard | undefined;
}

/** What a guard check decided. */
export interface GuardOutcome {
  decisions: GuardDecision[];
  /**
   * `checkOutput`: true when it rewrote the completion it was given (masking). Only then does the answer step
   * serialise it again; otherwise the upstream's bytes go to the client as they came.
   *
   * `checkInput`: false promises that `call.body` is as it was; only then may the client's own JSON text go
   * upstream (`chat/forward-json.ts`). Anything else (true, or left out) and `call.body` is serialised.
   */
  rewritten?: boolean;
}

/** One guardrail's decision on one call. */
export interface GuardDecision {
  /** `pii`, `prompt_injection`, or a LiteLLM `guardrail_name`. Letters, digits, `_`, `-`, `.` only. */
  guardrail: string;
  /** LiteLLM hook type. */
  hook: "pre_call" | "post_call";
  action: "allow" | "mask" | "block" | "error";
  /** `monitor`: the decision is recorded but not acted upon. */
  mode: "enforce" | "monitor";
  /** Presidio entity names found, e.g. `EMAIL_ADDRESS`. */
  entities?: string[];
  /** P(INJECTION) for `prompt_injection`, 0..1. */
  score?: number;
  /** Time the guardrail took, ms. */
  latencyMs: number;
  /** Free text for logs and traces (never the guarded content itself). */
  detail?: string;
}

/**
 * A per-call output guard for a stream. The relay feeds it every upstream SSE `data:` payload (a
 * `chat.completion.chunk` JSON string, after the gateway's own usage handling; never `[DONE]`), in order:
 *
 * - `onData` returns the payloads to send to the client now (the one given, rewritten, and/or payloads it held
 *   earlier, in order), or `"hold"` to keep this one back (buffer mode). Returning `[payload]` passes it through
 *   (report mode).
 * - `onEnd` is called once when the upstream finished cleanly: `release` are the payloads still to send (then
 *   `[DONE]`), or `block` replaces the rest of the stream by an error event (no `[DONE]`). Not called when the
 *   upstream failed or the client left.
 *
 * Both may return a promise; the relay stops reading the upstream while it waits. A throw from either ends the
 * stream like a block: with the thrown {@link GatewayError}, or a 500 `guardrail_error` for anything else.
 */
export interface StreamOutputGuard {
  onData(payload: string): string[] | "hold" | Promise<string[] | "hold">;
  onEnd(): StreamOutputEnd | Promise<StreamOutputEnd>;
}

/** The end of a guarded stream: release what was held, or block. Either way with the decisions taken. */
export type StreamOutputEnd =
  | { decisions: GuardDecision[]; release: string[] }
  | { decisions: GuardDecision[]; block: GatewayError };

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

/** Every observer's response headers for `call`. */
export function observerHeaders(
  observers: readonly CallObserver[],
  call: CallContext,
): Record<string, string> {
  let headers: Record<string, string> = {};
  for (const observer of observers) {
    if (observer.responseHeaders) headers = { ...headers, ...observer.responseHeaders(call) };
  }
  return headers;
}
