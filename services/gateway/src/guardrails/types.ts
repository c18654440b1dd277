/**
 * The guardrails seam of the pipeline: `CallGuard`, `GuardOutcome`, `GuardDecision`, `StreamOutputGuard` and
 * `TextExtractor`, declared here, below the pipeline (which imports them; `pipeline/types.ts` re-exports them), so
 * that streaming and the engine in this folder need nothing from the pipeline.
 *
 * `GuardCall` is the part of the chat route's `CallContext` the guard reads and writes: the request body
 * (rewritten in place when masking), the caller, and the call's decisions (a refusal adds its decisions there
 * before it throws, so the response headers and the observers see them). A `CallContext` satisfies it.
 */
import type { GatewayError } from "../errors/gateway-error.js";
import type { TextSlot } from "./text/slots.js";

/** What the guard needs from a call (a subset of the chat route's CallContext). */
export interface GuardCall {
  body: Record<string, unknown>;
  /**
   * The caller. A virtual key's `metadata.guardrails` (`{"pii": "monitor", "prompt_injection": "off"}`) overrides
   * the policy's mode per key; only the master key can set key metadata (admin API).
   */
  auth: { kind: string; metadata?: Readonly<Record<string, unknown>> | undefined };
  /** The call's guardrail decisions so far. */
  decisions: GuardDecision[];
}

/** Every text a model reads in a body, as slots the guardrails read and may rewrite (`guardrails/text/slots.ts`). */
export type TextExtractor = (body: Record<string, unknown>) => TextSlot[];

/** Guardrails seam. Every method may be slow (a classifier, Presidio); the call waits for it. */
export interface CallGuard {
  /**
   * Before the upstream call: every text `texts` finds in `call.body` (the endpoint's extractor). May rewrite
   * them (masking) and returns its decisions, with `rewritten: false` when it did not rewrite anything.
   * To block, throw a {@link GatewayError} (e.g. 400 `guardrail_violation`); push the blocking decision onto
   * `call.decisions` first so the response headers and the observers see it. The reservation is released.
   */
  checkInput(call: GuardCall, texts: TextExtractor): Promise<GuardOutcome>;
  /**
   * A non-streamed answer: `completion` is the upstream's parsed JSON in the endpoint's answer shape (an OpenAI
   * `chat.completion` object for chat), `texts` the endpoint's extractor of its model-written text.
   * May rewrite it in place (masking; say so with `rewritten: true`, and the client gets the rewritten object) or throw a {@link GatewayError} to
   * block (the client gets that error instead; the call is still paid for: the upstream was used).
   */
  checkOutput(call: GuardCall, completion: unknown, texts: TextExtractor): Promise<GuardOutcome>;
  /**
   * A streamed answer in chat completion chunks: a per-call {@link StreamOutputGuard}, or undefined when no
   * output guard applies.
   */
  streamOutput(call: GuardCall): StreamOutputGuard | undefined;
}

/** What a guard check decided. */
export interface GuardOutcome {
  decisions: GuardDecision[];
  /**
   * `checkOutput`: true when it rewrote the completion it was given (masking). Only then does the answer step
   * serialise it again; otherwise the upstream's bytes go to the client as they came.
   *
   * `checkInput`: false promises that `call.body` is as it was; only then may the client's own JSON text go
   * upstream (`providers/openai-compatible/forward-json.ts`). Anything else (true, or left out) and `call.body` is serialised.
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
