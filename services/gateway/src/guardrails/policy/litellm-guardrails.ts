/**
 * Reads LiteLLM's `guardrails:` list (config.yaml) into the policy's PII section, so a LiteLLM user's config
 * keeps working. Source of the format: BerriAI/litellm docs/my-website/docs/proxy/guardrails/quick_start.md and
 * pii_masking_v2.md: entries `{guardrail_name, litellm_params: {guardrail: presidio, mode, default_on,
 * pii_entities_config, presidio_score_thresholds, presidio_filter_scope}}`.
 *
 * Mapping:
 * - `mode` pre_call / during_call → scope input; post_call → scope output (a list of modes is their union);
 *   `presidio_filter_scope` (input | output | both) wins when set.
 * - `mode: logging_only` → monitor (LiteLLM masks only its logged copy; here the call is left unchanged and the
 *   decision recorded).
 * - `default_on: true` → enforce; absent or false → off (LiteLLM then runs it only on request; here a key's
 *   `metadata.guardrails` can turn it on).
 * - `pii_entities_config` → entities, `presidio_score_thresholds` → score_threshold.
 * Only `guardrail: presidio` entries can be honoured; any other guardrail refuses start-up (running without a
 * configured guardrail would be silent). Several presidio entries merge into one (their scopes joined) when
 * their entities and thresholds agree.
 */
import { z } from "zod";
import { formatPath, type Path, Problems } from "./problems.js";
import type { GuardMode, PiiSection } from "./schema.js";

/** The PII section a LiteLLM config yields, and where each of its keys came from (for conflict messages). */
export interface LiteLLMPii {
  /** The guardrail_name of the (first) presidio entry. */
  name: string;
  section: PiiSection & { mode: GuardMode };
  /** Key of `section` → its path in config.yaml. */
  sources: Partial<Record<keyof PiiSection, Path>>;
}

/** Result of {@link readLiteLLMGuardrails}. */
export interface LiteLLMGuardrails {
  pii?: LiteLLMPii;
  /** Keys read but not used, one sentence each; log them at start-up. */
  warnings: string[];
}

const hookModes = ["pre_call", "post_call", "during_call", "logging_only"] as const;
type HookMode = (typeof hookModes)[number];

const paramsSchema = z.looseObject({
  guardrail: z.string({ error: "must be a string naming the guardrail type (presidio)" }),
  mode: z
    .union([z.enum(hookModes), z.array(z.enum(hookModes)).min(1)], {
      error: `must be one of ${hookModes.join(" | ")} (or a list of them)`,
    })
    .optional(),
  default_on: z.boolean({ error: "must be true or false" }).optional(),
  pii_entities_config: z
    .record(z.string(), z.enum(["MASK", "BLOCK"], { error: "must be MASK or BLOCK" }), {
      error: "must be a mapping of entity names to MASK | BLOCK",
    })
    .optional(),
  presidio_score_thresholds: z
    .record(z.string(), z.number({ error: "must be a number from 0 to 1" }).min(0).max(1), {
      error: "must be a mapping of entity names (or ALL) to numbers from 0 to 1",
    })
    .optional(),
  presidio_filter_scope: z
    .enum(["input", "output", "both"], { error: "must be input | output | both" })
    .optional(),
});

const entrySchema = z.looseObject({
  guardrail_name: z.string({ error: "must be a string" }).min(1, "must not be empty"),
  litellm_params: paramsSchema,
});

/** litellm_params keys the gateway reads. Others are reported as ignored. */
const usedParams = new Set([
  "guardrail",
  "mode",
  "default_on",
  "pii_entities_config",
  "presidio_score_thresholds",
  "presidio_filter_scope",
]);
const ignoredReasons: Record<string, string> = {
  presidio_analyzer_api_base: "set PII_ANALYZER_API_BASE in the gateway's environment instead",
  presidio_anonymizer_api_base: "set PII_ANONYMIZER_API_BASE in the gateway's environment instead",
  api_base: "set PII_ANALYZER_API_BASE in the gateway's environment instead",
  output_parse_pii: "masked values are not restored in the answer",
};

/**
 * Reads LiteLLM's `guardrails:` list.
 * @param raw the list as parsed from config.yaml (`guardrails:`), unvalidated.
 * @param file the config file's name, for messages.
 * @throws PolicyError naming the file and path of every problem (invalid entry, unsupported guardrail type,
 *   presidio entries that disagree).
 */
export function readLiteLLMGuardrails(raw: unknown[], file: string): LiteLLMGuardrails {
  const problems = new Problems();
  const warnings: string[] = [];
  let pii: LiteLLMPii | undefined;
  let piiAt: Path = [];

  raw.forEach((value, index) => {
    const at: Path = ["guardrails", index];
    const entry = problems.parse(entrySchema, value, file, at);
    if (entry === undefined) return;
    const params = entry.litellm_params;
    const paramsAt: Path = [...at, "litellm_params"];
    if (params.guardrail !== "presidio") {
      problems.add(
        file,
        [...paramsAt, "guardrail"],
        `guardrail type "${params.guardrail}" is not supported by this gateway; supported: presidio (prompt injection is configured in the guardrail policy, guardrails.prompt_injection)`,
      );
      return;
    }
    for (const key of Object.keys(params)) {
      if (usedParams.has(key)) continue;
      const reason = ignoredReasons[key] ?? "not used by this gateway";
      warnings.push(`${file}: ${formatPath([...paramsAt, key])}: ignored (${reason})`);
    }
    problems.checkEntityKeys(file, [...paramsAt, "pii_entities_config"], params.pii_entities_config, false);
    problems.checkEntityKeys(
      file,
      [...paramsAt, "presidio_score_thresholds"],
      params.presidio_score_thresholds,
      true,
    );
    const next = toSection(entry.guardrail_name, params, paramsAt);
    if (pii === undefined) {
      pii = next;
      piiAt = at;
      return;
    }
    for (const key of ["entities", "score_threshold", "mode"] as const) {
      if (JSON.stringify(pii.section[key]) !== JSON.stringify(next.section[key])) {
        problems.add(
          file,
          next.sources[key] ?? paramsAt,
          `disagrees with the presidio guardrail at ${formatPath(pii.sources[key] ?? piiAt)}; this gateway runs one PII guardrail: give both entries the same entities, thresholds and default_on, or merge them`,
        );
        return;
      }
    }
    pii.section.scope = joinScopes(pii.section.scope ?? "input", next.section.scope ?? "input");
  });
  problems.throwIfAny();
  return pii === undefined ? { warnings } : { pii, warnings };
}

function toSection(name: string, params: z.infer<typeof paramsSchema>, at: Path): LiteLLMPii {
  const modes: HookMode[] = params.mode === undefined ? ["pre_call"] : [params.mode].flat();
  const onlyLogging = modes.every((m) => m === "logging_only");
  const mode: GuardMode = params.default_on !== true ? "off" : onlyLogging ? "monitor" : "enforce";
  const input = modes.some((m) => m === "pre_call" || m === "during_call" || m === "logging_only");
  const output = modes.includes("post_call");
  const scope = params.presidio_filter_scope ?? (input && output ? "both" : output ? "output" : "input");
  const section: LiteLLMPii["section"] = { mode, scope };
  const sources: LiteLLMPii["sources"] = {
    mode: [...at, params.default_on === undefined ? "mode" : "default_on"],
    scope: [...at, params.presidio_filter_scope === undefined ? "mode" : "presidio_filter_scope"],
  };
  if (params.pii_entities_config !== undefined) {
    section.entities = params.pii_entities_config;
    sources.entities = [...at, "pii_entities_config"];
  }
  if (params.presidio_score_thresholds !== undefined) {
    section.score_threshold = params.presidio_score_thresholds;
    sources.score_threshold = [...at, "presidio_score_thresholds"];
  }
  return { name, section, sources };
}

function joinScopes(
  a: "input" | "output" | "both",
  b: "input" | "output" | "both",
): "input" | "output" | "both" {
  return a === b ? a : "both";
}
