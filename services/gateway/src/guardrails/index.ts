/**
 * Builds the gateway's guardrails from the policy file, LiteLLM's `guardrails:` list and the environment:
 * the engine (the pipeline's CallGuard), its metrics on the gateway's registry, and what to log at start-up.
 */
import type { Registry } from "prom-client";
import { GuardrailEngine } from "./engine.js";
import { scannerClient } from "./injection/scanner-client.js";
import { createGuardrailMetrics } from "./metrics.js";
import { presidioAnalyzer } from "./pii/presidio-client.js";
import { builtInAnalyzer } from "./pii/recognizers.js";
import { loadGuardrailPolicy } from "./policy/load-policy.js";
import { readGuardrailSettings } from "./settings.js";

export { GuardrailEngine } from "./engine.js";
export { validateKeyGuardrails } from "./policy/key-overrides.js";
export { PolicyError } from "./policy/problems.js";
export { GuardrailRefusal } from "./refusals.js";
export type { GuardCall } from "./types.js";

/** Inputs of {@link createGuardrails}. */
export interface CreateGuardrailsOptions {
  /** GatewayEnv.policyPath (GUARDRAIL_POLICY). */
  policyPath: string;
  /** LiteLLM's raw `guardrails:` list from config.yaml and that file's path, when it has one. */
  litellm?: { guardrails: unknown[]; file: string } | undefined;
  /** The gateway's metrics registry. */
  registry: Registry;
  /** Environment holding PII_ANALYZER_API_BASE, GUARD_SCANNER_API_BASE, … (default process.env). */
  env?: NodeJS.ProcessEnv;
}

/** The built guardrails. */
export interface Guardrails {
  /** Undefined when the policy turns every guardrail off (the chat route then skips the hooks). */
  guard: GuardrailEngine | undefined;
  /** Warnings about ignored LiteLLM keys; log them. */
  warnings: string[];
  /** One line describing what runs, for the start-up log (no secrets: URLs without credentials). */
  summary: string;
}

/**
 * Creates the guardrails.
 * @throws PolicyError (policy file, LiteLLM list, conflict between them), EnvError (invalid URL variables).
 */
export function createGuardrails(options: CreateGuardrailsOptions): Guardrails {
  const settings = readGuardrailSettings(options.env);
  const { policy, warnings } = loadGuardrailPolicy({
    policyPath: options.policyPath,
    litellm: options.litellm,
  });
  const parts: string[] = [];
  if (policy.pii && policy.pii.mode !== "off") {
    const where = settings.analyzerApiBase
      ? `Presidio at ${origin(settings.analyzerApiBase)}`
      : "built-in recognizers";
    parts.push(`${policy.pii.name} (${policy.pii.mode}, scope ${policy.pii.scope}, ${where})`);
  }
  if (policy.promptInjection && policy.promptInjection.mode !== "off") {
    const where = settings.scannerApiBase
      ? `scanner at ${origin(settings.scannerApiBase)}`
      : "no scanner configured";
    parts.push(
      `prompt_injection (${policy.promptInjection.mode}, threshold ${policy.promptInjection.threshold}, ${where})`,
    );
  }
  const anyConfigured = policy.pii !== undefined || policy.promptInjection !== undefined;
  if (!anyConfigured) return { guard: undefined, warnings, summary: "guardrails: none configured" };
  const guard = new GuardrailEngine({
    policy,
    analyzer: settings.analyzerApiBase
      ? presidioAnalyzer({ apiBase: settings.analyzerApiBase, timeoutMs: settings.analyzerTimeoutMs })
      : builtInAnalyzer,
    scanner: settings.scannerApiBase ? scannerClient(settings.scannerApiBase) : undefined,
    metrics: createGuardrailMetrics(options.registry),
  });
  const summary = `guardrails: ${parts.length > 0 ? parts.join("; ") : "all off by policy (keys may turn them on)"}`;
  return { guard, warnings, summary };
}

/** scheme://host:port of a URL (drops any credentials or path). */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid URL)";
  }
}
