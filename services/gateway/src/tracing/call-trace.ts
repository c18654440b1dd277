/**
 * What a finished model call tells the tracer: plain facts gathered along the request path, with no
 * reference to the request objects (so the queue keeps no request alive). Times are epoch ms, costs USD,
 * usage in tokens.
 */

import type { CaptureContent } from "../config/trace-settings.js";
import type { GuardDecision } from "../guardrails/types.js";
import type { UsageDetails } from "./usage-details.js";

/** One model call, finished (answered, refused after admission, or failed). */
export interface CallTrace {
  /**
   * The trace's and its root span's name: the endpoint called (`chat.completions`, `responses`, `embeddings`,
   * `completions`, `anthropic.messages`; `tracing/observer.ts` names them from the call's `call_type`).
   */
  name: string;
  /**
   * The generation's operation, OpenTelemetry's `gen_ai.operation.name` (`chat`, `embeddings`,
   * `text_completion`): the generation is named `<operation> <requested model>`.
   */
  operation: string;
  /** 32 lowercase hex characters; also sent to the client in `x-trace-id`. */
  traceId: string;
  requestId: string;
  /** When the request arrived and when its answer ended, epoch ms. */
  startTime: number;
  endTime: number;
  /** The key's user, or the chat user the call is booked on. */
  userId?: string;
  keyAlias?: string;
  /** Conversation id the client sent (LibreChat's), trace session. */
  sessionId?: string;
  tags: string[];
  /** The alias the client asked for, e.g. "general". */
  requestedModel: string;
  /** The deployment's model, `provider/name`; absent when no deployment answered. */
  model?: string;
  deploymentId?: string;
  /** temperature, max_tokens, top_p, … as the client sent them. */
  modelParameters: Record<string, string | number | boolean>;
  stream: boolean;
  /** Messages as the client sent them and as they went upstream (after the input guardrails). */
  input: { original: unknown; sent?: unknown };
  /** The answer as the upstream gave it and as the client got it (after the output guardrails). */
  output?: { upstream?: unknown; returned?: unknown };
  /**
   * Langfuse usage details, tokens: `input`, `output`, `total` and the parts priced apart (`input_cached_tokens`,
   * `output_reasoning_tokens`, …: tracing/usage-details.ts).
   */
  usage?: UsageDetails;
  /** Cost in USD, the same figure as `x-litellm-response-cost`. */
  costUsd?: number;
  /** First byte of the answer, epoch ms (time to first token). */
  completionStartTime?: number;
  /** HTTP status the client got (499: the client went away). */
  status: number;
  errorType?: string;
  errorMessage?: string;
  /** Guardrail decisions, input then output: each becomes a child observation of type `guardrail`. */
  guardrails: readonly GuardDecision[];
  /**
   * The call was answered from the response cache (no upstream, $0; `output` is the stored answer as replayed);
   * tagged `cache_hit` and in the generation's metadata.
   */
  cacheHit: boolean;
}

/** A trace id for a request id: the UUID's 32 hex digits, so logs and traces share one id. */
export function traceIdFor(requestId: string): string {
  const hex = requestId.replaceAll("-", "").toLowerCase();
  return /^[0-9a-f]{32}$/.test(hex) && !/^0+$/.test(hex) ? hex : randomTraceId();
}

function randomTraceId(): string {
  let out = "";
  for (let i = 0; i < 4; i++)
    out += Math.floor(Math.random() * 0x1_0000_0000)
      .toString(16)
      .padStart(8, "0");
  return out;
}

/**
 * The input and output a trace (of a model call or a tool call) carries under a capture mode (see CaptureContent),
 * as JSON text cut to `maxChars` (`limitText`); none with capture "none".
 */
export function capturedContent(
  call: Pick<CallTrace, "input" | "output">,
  capture: CaptureContent,
  maxChars: number,
): { input?: string; output?: string } {
  if (capture === "none") return {};
  const input = capture === "full" ? call.input.original : (call.input.sent ?? call.input.original);
  const output =
    capture === "full" ? (call.output?.upstream ?? call.output?.returned) : call.output?.returned;
  return { input: limitText(input, maxChars), output: limitText(output, maxChars) };
}

/** JSON text of `value`, cut to `maxChars` with a marker saying how much was left out. */
export function limitText(value: unknown, maxChars: number): string | undefined {
  if (value === undefined) return undefined;
  let text: string;
  try {
    text = typeof value === "string" ? value : JSON.stringify(value);
  } catch {
    return "<not serializable>";
  }
  if (text === undefined) return undefined;
  return text.length <= maxChars
    ? text
    : `${text.slice(0, maxChars)}… [${text.length - maxChars} more characters not traced]`;
}
