/**
 * The guardrail policy, `litellm/guardrails/policy.yaml` (GUARDRAIL_POLICY): its zod schema (strict: an unknown
 * key is an error, "unknown threshold key(s): …") and the resolved shape the engine runs on.
 */
import { z } from "zod";

/** enforce: act (mask/block); monitor: decide and record, change nothing; off: do not run. */
export type GuardMode = "enforce" | "monitor" | "off";
/** What happens when the guardrail's service cannot answer: 503 naming the guardrail, or pass (recorded). */
export type OnError = "fail_closed" | "fail_open";
/** Presidio's anonymizer operators the policy uses: replace with `<ENTITY_TYPE>`, or refuse the call. */
export type PiiAction = "MASK" | "BLOCK";

/** The PII guardrail, resolved. */
export interface PiiPolicy {
  /** The guardrail's name in decisions, headers, metrics and the block message: `pii` or a LiteLLM guardrail_name. */
  name: string;
  mode: GuardMode;
  /** Which side is checked: the request (`input`, pre_call), the answer (`output`, post_call) or both. */
  scope: "input" | "output" | "both";
  onError: OnError;
  /** Minimum score (0..1) per entity; `ALL` for every other entity. A detection below it is ignored. */
  scoreThreshold: Readonly<Record<string, number>>;
  /** The entities acted on, and how. Entities not listed are not acted on. */
  entities: Readonly<Record<string, PiiAction>>;
  /** Exact texts never treated as PII (e.g. a support address). */
  allowList: readonly string[];
  /** Streams: hold the answer until moderated (`buffer`), or pass it and decide at the end (`report`). */
  streamOutput: "buffer" | "report";
}

/** The prompt-injection guardrail, resolved. */
export interface InjectionPolicy {
  name: "prompt_injection";
  mode: GuardMode;
  /** Block (or flag) when P(INJECTION) ≥ threshold, 0..1. */
  threshold: number;
  /**
   * Message roles whose text is scanned (e.g. system, developer, user, tool). A message of a role OpenAI does
   * not define is always scanned.
   */
  roles: readonly string[];
  /** Scan the arguments of tool calls in the messages (`tool_calls[].function.arguments`), whatever the role. */
  toolCalls: boolean;
  /** Scan text outside the messages: tool definitions, `response_format` schemas, unknown fields. */
  requestFields: boolean;
  onError: OnError;
  /** Scanner call timeout, ms. */
  timeoutMs: number;
}

/** The whole policy. A guardrail absent from the file is off. */
export interface GuardrailPolicy {
  pii?: PiiPolicy;
  promptInjection?: InjectionPolicy;
}

/** Default values of a section's omitted keys (the values the shipped policy.yaml spells out). */
export const piiDefaults = {
  mode: "enforce",
  scope: "input",
  on_error: "fail_closed",
  score_threshold: { ALL: 0.5 },
  entities: {
    EMAIL_ADDRESS: "MASK",
    PHONE_NUMBER: "MASK",
    CREDIT_CARD: "BLOCK",
    IBAN_CODE: "BLOCK",
    US_SSN: "BLOCK",
  },
  allow_list: [],
  stream_output: "buffer",
} as const;

export const injectionDefaults = {
  mode: "enforce",
  threshold: 0.92,
  roles: ["system", "developer", "user", "tool"],
  tool_calls: true,
  request_fields: true,
  on_error: "fail_open",
  timeout_ms: 500,
} as const;

const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: () => `must be one of ${values.join(" | ")}` });

/** A strict mapping whose unknown keys are reported with the policy's wording. */
const strict = <S extends z.ZodRawShape>(shape: S) =>
  z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown threshold key(s): ${issue.keys.join(", ")}; allowed: ${Object.keys(shape).join(", ")}`
        : issue.code === "invalid_type"
          ? "must be a mapping"
          : undefined,
  });

const probability = z.number({ error: "must be a number from 0 to 1" }).min(0).max(1);
const modeSchema = oneOf(["enforce", "monitor", "off"]);
const onErrorSchema = oneOf(["fail_closed", "fail_open"]);
const entityMap = <T extends z.ZodType>(value: T) =>
  z.record(z.string(), value, { error: "must be a mapping of entity names (e.g. EMAIL_ADDRESS: MASK)" });

export const piiSectionSchema = strict({
  mode: modeSchema.optional(),
  scope: oneOf(["input", "output", "both"]).optional(),
  on_error: onErrorSchema.optional(),
  score_threshold: entityMap(probability).optional(),
  entities: entityMap(oneOf(["MASK", "BLOCK"])).optional(),
  allow_list: z.array(z.string(), { error: "must be a list of strings" }).optional(),
  stream_output: oneOf(["buffer", "report"]).optional(),
});

export const injectionSectionSchema = strict({
  mode: modeSchema.optional(),
  threshold: probability.optional(),
  roles: z
    .array(oneOf(["system", "developer", "user", "assistant", "tool"]), { error: "must be a list of roles" })
    .min(1, "must name at least one role")
    .optional(),
  tool_calls: z.boolean({ error: "must be true or false" }).optional(),
  request_fields: z.boolean({ error: "must be true or false" }).optional(),
  on_error: onErrorSchema.optional(),
  timeout_ms: z
    .number({ error: "must be a whole number of ms from 1 to 60000" })
    .int()
    .positive()
    .max(60_000)
    .optional(),
});

export const policyFileSchema = strict({
  guardrails: strict({
    pii: piiSectionSchema.optional(),
    prompt_injection: injectionSectionSchema.optional(),
  }),
});

/** The `pii` section as written in the file (every key optional). */
export type PiiSection = z.infer<typeof piiSectionSchema>;
/** The policy file as written. */
export type PolicyFile = z.infer<typeof policyFileSchema>;
