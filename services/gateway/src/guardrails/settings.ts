/**
 * The guardrails' service addresses, read from the environment (the gateway's env.ts reads the rest):
 * - `PII_ANALYZER_API_BASE`: Presidio analyzer, e.g. http://pii-analyzer:3000; unset → built-in recognizers.
 * - `PII_ANONYMIZER_API_BASE`: Presidio anonymizer; accepted, not called (masking replaces the analyzer's spans
 *   with `<ENTITY_TYPE>` in process, which is Presidio's default `replace` operator, without a second round trip
 *   per text).
 * - `PII_ANALYZER_TIMEOUT_MS`: analyzer call timeout, ms (default 2000).
 * - `GUARD_SCANNER_API_BASE`: the prompt-injection scanner, e.g. http://scanner:8000; unset → the
 *   prompt_injection guardrail answers per its `on_error` (recorded as an error decision).
 */
import { z } from "zod";
import { EnvError } from "../config/env.js";

/** Validated guardrail service settings. Base URLs have no trailing slash. */
export interface GuardrailSettings {
  analyzerApiBase: string | undefined;
  anonymizerApiBase: string | undefined;
  /** ms */
  analyzerTimeoutMs: number;
  scannerApiBase: string | undefined;
}

const url = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" || v === "replace-me" ? undefined : v.trim()))
  .refine((v) => v === undefined || /^https?:\/\/[^/\s]+/.test(v), "must be an http(s) URL")
  .transform((v) => v?.replace(/\/+$/, ""));

const schema = z.object({
  PII_ANALYZER_API_BASE: url,
  PII_ANONYMIZER_API_BASE: url,
  PII_ANALYZER_TIMEOUT_MS: z.coerce.number().int().positive().default(2000),
  GUARD_SCANNER_API_BASE: url,
});

/**
 * Reads the settings.
 * @throws EnvError naming each invalid variable (never its value).
 */
export function readGuardrailSettings(source: NodeJS.ProcessEnv = process.env): GuardrailSettings {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new EnvError(`invalid guardrail environment:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  return {
    analyzerApiBase: e.PII_ANALYZER_API_BASE,
    anonymizerApiBase: e.PII_ANONYMIZER_API_BASE,
    analyzerTimeoutMs: e.PII_ANALYZER_TIMEOUT_MS,
    scannerApiBase: e.GUARD_SCANNER_API_BASE,
  };
}
