/**
 * The guardrails seam of the chat path. `ChatGuard`, `GuardOutcome` and `GuardDecision` are the shapes the chat
 * route's steps call (guard input before the upstream call, guard output on the answer); the engine in this
 * folder implements them.
 *
 * `GuardCall` is the part of the chat route's per-call context the guard reads and rewrites. The route's own
 * context object satisfies it structurally (it carries the parsed body and the caller's auth).
 */

/** One chat message as the guard sees it (OpenAI's message object; other fields pass through untouched). */
export interface GuardMessage {
  role: string;
  content?: string | unknown[] | null | undefined;
  [field: string]: unknown;
}

/** What the guard needs from a call: the request body (rewritten in place when masking) and the caller. */
export interface GuardCall {
  body: { messages: GuardMessage[]; stream?: boolean | undefined; [field: string]: unknown };
  /**
   * The caller. A virtual key's `metadata.guardrails` (`{"pii": "monitor", "prompt_injection": "off"}`) overrides
   * the policy's mode per key; only the master key can set key metadata (admin API).
   */
  auth: { kind: string; metadata?: Readonly<Record<string, unknown>> | undefined };
}

/** One guardrail's verdict on one hook of one call. */
export interface GuardDecision {
  /** "pii" | "prompt_injection" | a LiteLLM `guardrail_name` (config.yaml `guardrails[]`). */
  guardrail: string;
  /** LiteLLM hook_type names: pre_call runs on the request, post_call on the answer. */
  hook: "pre_call" | "post_call";
  /** What the guardrail did (enforce) or would have done (monitor); `error` when its service failed. */
  action: "allow" | "mask" | "block" | "error";
  mode: "enforce" | "monitor";
  /** Presidio entity names found and acted on, e.g. EMAIL_ADDRESS. */
  entities?: string[];
  /** P(INJECTION), 0..1, for prompt_injection. */
  score?: number;
  /** Time the guardrail took, ms. */
  latencyMs: number;
  /** Why an `error` happened (never a value from the request). */
  detail?: string;
}

/** The decisions of one hook. */
export interface GuardOutcome {
  decisions: GuardDecision[];
}

/**
 * A per-call transformer for a streamed answer. The relay feeds it each upstream SSE `data:` payload (the JSON
 * text of a `chat.completion.chunk`, or `[DONE]`) and forwards what it returns.
 *
 * - `stream_output: buffer`: `push` holds everything (returns []); `finish` moderates the whole answer and
 *   returns the payloads to send (masked), or throws GatewayError (400) to block: nothing was sent yet.
 * - `stream_output: report`: `push` passes each payload through unchanged; `finish` decides on the whole answer
 *   and only records (the decision's mode is `monitor`: the text already left).
 */
export interface StreamOutputGuard {
  /** Returns the payloads to forward now, in order. */
  push(data: string): string[];
  /**
   * Called once after the upstream's last payload. Returns what is still to forward and the decisions.
   * @throws GatewayError 400 (PII block) in buffer mode, or 503 (analyzer down, fail_closed) in buffer mode.
   */
  finish(): Promise<{ forward: string[]; decisions: GuardDecision[] }>;
}

/** The guardrails seam of the chat route (implemented by `GuardrailEngine`). */
export interface ChatGuard {
  /** Before the upstream call. May rewrite messages (mask) and return decisions; throws GatewayError to block. */
  checkInput(call: GuardCall): Promise<GuardOutcome>;
  /** Non-streamed answer: the parsed upstream JSON; may rewrite it (mask) or throw GatewayError to block. */
  checkOutput(call: GuardCall, completion: unknown): Promise<GuardOutcome>;
  /** Streams: a per-call transformer, or undefined when no output guard applies to this call. */
  streamOutput(call: GuardCall): StreamOutputGuard | undefined;
}
