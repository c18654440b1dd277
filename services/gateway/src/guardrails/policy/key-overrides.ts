/**
 * Per-key guardrail modes: a virtual key's `metadata.guardrails`, e.g. `{"pii": "monitor", "prompt_injection":
 * "off"}`, overrides the policy's mode for that key's calls. Only the master key can set key metadata (admin API).
 */
import type { GuardMode } from "./schema.js";

const modes: ReadonlySet<string> = new Set(["enforce", "monitor", "off"]);

/**
 * Validates `metadata.guardrails` of a key (for the admin API, when a key is created or updated).
 * @param guardrails the names the policy knows (e.g. ["pii", "prompt_injection"]).
 * @returns a sentence for a 400 naming what is wrong, or undefined when valid (or absent).
 */
export function validateKeyGuardrails(metadata: unknown, guardrails: readonly string[]): string | undefined {
  if (typeof metadata !== "object" || metadata === null) return undefined;
  const value = (metadata as Record<string, unknown>).guardrails;
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `metadata.guardrails must be a mapping of guardrail name to enforce | monitor | off, e.g. {"pii": "monitor"}`;
  }
  for (const [name, mode] of Object.entries(value)) {
    if (!guardrails.includes(name)) {
      return `metadata.guardrails.${name}: unknown guardrail; known: ${guardrails.join(", ")}`;
    }
    if (typeof mode !== "string" || !modes.has(mode)) {
      return `metadata.guardrails.${name} must be one of enforce | monitor | off`;
    }
  }
  return undefined;
}

/**
 * The mode of `guardrail` for a caller: the key's override when it is a valid mode, else the policy's.
 * An invalid override is ignored (the policy applies), so a typo never weakens a guardrail.
 */
export function effectiveMode(
  guardrail: string,
  policyMode: GuardMode,
  metadata: Readonly<Record<string, unknown>> | undefined,
): GuardMode {
  const overrides = metadata?.guardrails;
  if (typeof overrides !== "object" || overrides === null) return policyMode;
  const mode = (overrides as Record<string, unknown>)[guardrail];
  return typeof mode === "string" && modes.has(mode) ? (mode as GuardMode) : policyMode;
}
