/**
 * Trace export settings, read from the environment. The Pulumi program passes `TRACE_HOST`,
 * `TRACE_PUBLIC_KEY` and `TRACE_SECRET_KEY`; Langfuse's own SDK names (`LANGFUSE_BASE_URL`, `LANGFUSE_HOST`,
 * `LANGFUSE_PUBLIC_KEY`, `LANGFUSE_SECRET_KEY`) are accepted too, the `TRACE_*` ones winning.
 */
import { z } from "zod";

/** What a trace carries of the conversation: `masked` (default) is the text after the PII guardrail. */
export type CaptureContent = "masked" | "full" | "none";

/** Validated trace settings. Times in ms, sizes in bytes. */
export interface TraceSettings {
  /** Langfuse base URL, e.g. http://trace-web:3000 (no trailing slash). */
  host: string;
  publicKey: string;
  secretKey: string;
  capture: CaptureContent;
  /** Spans kept while Langfuse is slow or down; the oldest are dropped beyond this. */
  maxQueueSpans: number;
  /** Bytes of span attributes kept in the queue; the oldest spans are dropped beyond this. */
  maxQueueBytes: number;
  /** Longest text kept per input or output field; longer text is cut and marked. */
  maxContentChars: number;
  /** How often queued spans are sent, ms. */
  flushIntervalMs: number;
  /** Spans per export request. */
  batchSize: number;
  /** One export request's timeout, ms. */
  exportTimeoutMs: number;
  /**
   * Build, queue and send the spans on a worker thread (`TRACE_EXPORT_THREAD=true`) instead of the event loop;
   * the loop then only captures each call's content and posts its facts.
   */
  exportThread: boolean;
  /** Langfuse's environment of every span (`LANGFUSE_TRACING_ENVIRONMENT`, e.g. `production`); unset: none. */
  environment?: string;
  /** Langfuse's release of every span (`LANGFUSE_RELEASE`, e.g. a version or commit); unset: none. */
  release?: string;
}

/** Raised for an invalid trace setting; the message names the variable. */
export class TraceSettingsError extends Error {
  override name = "TraceSettingsError";
}

const unset = (v: string | undefined) => (v === undefined || v === "" || v === "replace-me" ? undefined : v);
const positiveInt = (def: number) => z.coerce.number().int().positive().default(def);

const schema = z.object({
  TRACE_CAPTURE_CONTENT: z.enum(["masked", "full", "none"]).default("masked"),
  TRACE_MAX_QUEUE_SPANS: positiveInt(2048),
  TRACE_MAX_QUEUE_MB: z.coerce.number().positive().default(32),
  TRACE_MAX_CONTENT_CHARS: positiveInt(16_384),
  TRACE_FLUSH_INTERVAL_MS: positiveInt(1000),
  TRACE_BATCH_SIZE: positiveInt(64),
  TRACE_EXPORT_TIMEOUT_MS: positiveInt(5000),
  TRACE_EXPORT_THREAD: z.enum(["true", "false"]).default("false"),
});

/**
 * Reads the trace settings. Returns undefined when no trace host or keys are set (tracing off).
 * @throws TraceSettingsError when only some of host/public key/secret key are set, or a value is invalid.
 */
export function readTraceSettings(env: NodeJS.ProcessEnv = process.env): TraceSettings | undefined {
  const host = unset(env.TRACE_HOST) ?? unset(env.LANGFUSE_BASE_URL) ?? unset(env.LANGFUSE_HOST);
  const publicKey = unset(env.TRACE_PUBLIC_KEY) ?? unset(env.LANGFUSE_PUBLIC_KEY);
  const secretKey = unset(env.TRACE_SECRET_KEY) ?? unset(env.LANGFUSE_SECRET_KEY);
  const given = { TRACE_HOST: host, TRACE_PUBLIC_KEY: publicKey, TRACE_SECRET_KEY: secretKey };
  const missing = Object.entries(given).filter(([, v]) => v === undefined);
  if (missing.length === 3) return undefined;
  if (missing.length > 0) {
    throw new TraceSettingsError(
      `tracing is half configured: ${missing.map(([k]) => k).join(", ")} not set (set all three of TRACE_HOST, TRACE_PUBLIC_KEY, TRACE_SECRET_KEY, or none to turn tracing off)`,
    );
  }
  let url: URL;
  try {
    url = new URL(host as string);
  } catch {
    throw new TraceSettingsError(`TRACE_HOST: not a URL: ${host}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TraceSettingsError(`TRACE_HOST: must be http:// or https://, got ${url.protocol}`);
  }
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new TraceSettingsError(`invalid trace settings: ${lines.join("; ")}`);
  }
  const e = parsed.data;
  return {
    host: url.href.replace(/\/+$/, ""),
    publicKey: publicKey as string,
    secretKey: secretKey as string,
    capture: e.TRACE_CAPTURE_CONTENT,
    maxQueueSpans: e.TRACE_MAX_QUEUE_SPANS,
    maxQueueBytes: Math.round(e.TRACE_MAX_QUEUE_MB * 1024 * 1024),
    maxContentChars: e.TRACE_MAX_CONTENT_CHARS,
    flushIntervalMs: e.TRACE_FLUSH_INTERVAL_MS,
    batchSize: e.TRACE_BATCH_SIZE,
    exportTimeoutMs: e.TRACE_EXPORT_TIMEOUT_MS,
    exportThread: e.TRACE_EXPORT_THREAD === "true",
    ...(unset(env.LANGFUSE_TRACING_ENVIRONMENT) === undefined
      ? {}
      : { environment: env.LANGFUSE_TRACING_ENVIRONMENT }),
    ...(unset(env.LANGFUSE_RELEASE) === undefined ? {} : { release: env.LANGFUSE_RELEASE }),
  };
}
