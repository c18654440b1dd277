/**
 * Loads the guardrail policy: `litellm/guardrails/policy.yaml` (GUARDRAIL_POLICY), merged with the presidio
 * entries of LiteLLM's `guardrails:` list in config.yaml. Everything wrong is reported at once in a
 * {@link PolicyError}; each line names the file, the path inside it and what is allowed. A key both files set
 * to different values refuses start-up, naming both.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { type LiteLLMPii, readLiteLLMGuardrails } from "./litellm-guardrails.js";
import { formatPath, PolicyError, Problems } from "./problems.js";
import {
  type GuardrailPolicy,
  type InjectionPolicy,
  injectionDefaults,
  type PiiPolicy,
  type PiiSection,
  type PolicyFile,
  piiDefaults,
  policyFileSchema,
} from "./schema.js";

/** Inputs of {@link loadGuardrailPolicy}. */
export interface LoadPolicyOptions {
  /** Path of policy.yaml (GatewayEnv.policyPath). */
  policyPath: string;
  /** LiteLLM's raw `guardrails:` list from config.yaml, and that file's name; absent when it has none. */
  litellm?: { guardrails: unknown[]; file: string } | undefined;
}

/** The resolved policy and what the operator should know about it. */
export interface LoadedPolicy {
  policy: GuardrailPolicy;
  /** One sentence per ignored LiteLLM key; log them at start-up. */
  warnings: string[];
}

/**
 * Reads, validates and merges the policy.
 * @throws PolicyError (unreadable file, YAML syntax, unknown key: "unknown threshold key(s): …", invalid value,
 *   LiteLLM guardrail that cannot be honoured, conflict between the two files).
 */
export function loadGuardrailPolicy(options: LoadPolicyOptions): LoadedPolicy {
  let text: string;
  try {
    text = readFileSync(options.policyPath, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new PolicyError([
      `${options.policyPath}: cannot read the guardrail policy (${code}); set GUARDRAIL_POLICY to a policy.yaml (the checkout ships litellm/guardrails/policy.yaml)`,
    ]);
  }
  const file = parsePolicy(text, options.policyPath);
  const litellm =
    options.litellm === undefined || options.litellm.guardrails.length === 0
      ? { warnings: [] }
      : readLiteLLMGuardrails(options.litellm.guardrails, options.litellm.file);
  const piiSection = mergePii(file, options.policyPath, litellm.pii, options.litellm?.file ?? "");
  const policy: GuardrailPolicy = {};
  if (piiSection !== undefined) policy.pii = resolvePii(piiSection.section, piiSection.name);
  const injection = file.guardrails.prompt_injection;
  if (injection !== undefined) policy.promptInjection = resolveInjection(injection);
  return { policy, warnings: litellm.warnings };
}

/**
 * Parses and validates a policy file's text.
 * @param file the file's name, for messages.
 * @throws PolicyError
 */
export function parsePolicy(text: string, file: string): PolicyFile {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (error) {
    throw new PolicyError([`${file}: YAML syntax error: ${(error as Error).message.split("\n")[0]}`]);
  }
  const problems = new Problems();
  if (raw === null || raw === undefined) {
    problems.add(
      file,
      [],
      "the file is empty; expected a mapping with `guardrails:` (pii, prompt_injection)",
    );
  }
  const parsed = problems.parse(policyFileSchema, raw ?? {}, file, []);
  const pii = parsed?.guardrails.pii;
  problems.checkEntityKeys(file, ["guardrails", "pii", "score_threshold"], pii?.score_threshold, true);
  problems.checkEntityKeys(file, ["guardrails", "pii", "entities"], pii?.entities, false);
  problems.throwIfAny();
  return parsed as PolicyFile;
}

function mergePii(
  file: PolicyFile,
  policyPath: string,
  litellm: LiteLLMPii | undefined,
  configPath: string,
): { section: PiiSection; name: string } | undefined {
  const own = file.guardrails.pii;
  if (litellm === undefined) return own === undefined ? undefined : { section: own, name: "pii" };
  if (own === undefined) return { section: litellm.section, name: litellm.name };
  const conflicts: string[] = [];
  for (const key of Object.keys(litellm.section) as Array<keyof PiiSection>) {
    if (own[key] === undefined || sameValue(own[key], litellm.section[key])) continue;
    conflicts.push(
      `${policyPath}: ${formatPath(["guardrails", "pii", key])} conflicts with ${configPath}: ${formatPath(litellm.sources[key] ?? ["guardrails"])} (the two files configure the PII guardrail differently; set it in one of them, or make them agree)`,
    );
  }
  if (conflicts.length > 0) throw new PolicyError(conflicts);
  return { section: { ...own, ...litellm.section }, name: litellm.name };
}

function resolvePii(section: PiiSection, name: string): PiiPolicy {
  return {
    name,
    mode: section.mode ?? piiDefaults.mode,
    scope: section.scope ?? piiDefaults.scope,
    onError: section.on_error ?? piiDefaults.on_error,
    scoreThreshold: section.score_threshold ?? piiDefaults.score_threshold,
    entities: section.entities ?? piiDefaults.entities,
    allowList: section.allow_list ?? piiDefaults.allow_list,
    streamOutput: section.stream_output ?? piiDefaults.stream_output,
  };
}

function resolveInjection(
  section: NonNullable<PolicyFile["guardrails"]["prompt_injection"]>,
): InjectionPolicy {
  return {
    name: "prompt_injection",
    mode: section.mode ?? injectionDefaults.mode,
    threshold: section.threshold ?? injectionDefaults.threshold,
    roles: section.roles ?? injectionDefaults.roles,
    toolCalls: section.tool_calls ?? injectionDefaults.tool_calls,
    requestFields: section.request_fields ?? injectionDefaults.request_fields,
    onError: section.on_error ?? injectionDefaults.on_error,
    timeoutMs: section.timeout_ms ?? injectionDefaults.timeout_ms,
  };
}

/** Deep equality of YAML values, mapping key order ignored. */
function sameValue(a: unknown, b: unknown): boolean {
  const canonical = (v: unknown): unknown =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v)
            .sort(([x], [y]) => x.localeCompare(y))
            .map(([k, x]) => [k, canonical(x)]),
        )
      : v;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}
