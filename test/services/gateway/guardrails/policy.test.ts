import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../../../services/gateway/src/config/env.js";
import {
  effectiveMode,
  validateKeyGuardrails,
} from "../../../../services/gateway/src/guardrails/policy/key-overrides.js";
import { readLiteLLMGuardrails } from "../../../../services/gateway/src/guardrails/policy/litellm-guardrails.js";
import {
  loadGuardrailPolicy,
  parsePolicy,
} from "../../../../services/gateway/src/guardrails/policy/load-policy.js";
import { PolicyError } from "../../../../services/gateway/src/guardrails/policy/problems.js";
import { injectionPolicy } from "./helpers.js";

const FILE = "litellm/guardrails/policy.yaml";

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyError);
    return [...(error as PolicyError).problems];
  }
  throw new Error("expected a PolicyError");
}

function writePolicy(yaml: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "gw-policy-")), "policy.yaml");
  writeFileSync(path, yaml);
  return path;
}

describe("policy.yaml", () => {
  it("the shipped policy loads with the issue's values", () => {
    const { policy } = loadGuardrailPolicy({ policyPath: `${repoRoot}litellm/guardrails/policy.yaml` });
    expect(policy.pii).toMatchObject({
      name: "pii",
      mode: "enforce",
      scope: "input",
      onError: "fail_closed",
      scoreThreshold: { ALL: 0.5, CREDIT_CARD: 0.8 },
      allowList: ["support@example.com"],
      streamOutput: "buffer",
    });
    expect(policy.pii?.entities).toMatchObject({
      EMAIL_ADDRESS: "MASK",
      CREDIT_CARD: "BLOCK",
      US_SSN: "BLOCK",
    });
    // name, enforce, 0.92, system/developer/user/tool messages, tool-call arguments, request fields, fail_open, 500 ms
    expect(policy.promptInjection).toEqual(
      injectionPolicy({
        roles: ["system", "developer", "user", "tool"],
        toolCalls: true,
        requestFields: true,
      }),
    );
  });

  it("an unknown threshold key names file, path and the key", () => {
    const problems = problemsOf(() =>
      parsePolicy("guardrails:\n  pii:\n    score_threshold: {ALL: 0.5, FOO: 0.2}\n", FILE),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^litellm\/guardrails\/policy\.yaml: guardrails\.pii\.score_threshold: unknown threshold key\(s\): FOO; allowed: ALL and Presidio entity names/,
    );
  });

  it("unknown keys anywhere are refused with the same wording and the allowed keys", () => {
    const problems = problemsOf(() =>
      parsePolicy(
        "guardrails:\n  pii:\n    mode: enforce\n    treshold: 1\n  prompt_injection:\n    timeout: 5\n  toxicity: {}\nextra: 1\n",
        FILE,
      ),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        `${FILE}: guardrails.pii: unknown threshold key(s): treshold; allowed: mode, scope, on_error, score_threshold, entities, allow_list, stream_output`,
        `${FILE}: guardrails.prompt_injection: unknown threshold key(s): timeout; allowed: mode, threshold, roles, tool_calls, request_fields, on_error, timeout_ms`,
        `${FILE}: guardrails: unknown threshold key(s): toxicity; allowed: pii, prompt_injection`,
        `${FILE}: (top level): unknown threshold key(s): extra; allowed: guardrails`,
      ]),
    );
  });

  it("invalid values name the path and what is allowed", () => {
    const problems = problemsOf(() =>
      parsePolicy(
        [
          "guardrails:",
          "  pii:",
          "    mode: block",
          "    scope: everything",
          "    on_error: retry",
          "    score_threshold: {ALL: 2}",
          "    entities: {EMAIL_ADDRESS: HIDE, EMAIL: MASK}",
          "    stream_output: drop",
          "  prompt_injection:",
          "    threshold: high",
          "    roles: [user, robot]",
          "    timeout_ms: -1",
        ].join("\n"),
        FILE,
      ),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        `${FILE}: guardrails.pii.mode: must be one of enforce | monitor | off`,
        `${FILE}: guardrails.pii.scope: must be one of input | output | both`,
        `${FILE}: guardrails.pii.on_error: must be one of fail_closed | fail_open`,
        `${FILE}: guardrails.pii.entities.EMAIL_ADDRESS: must be one of MASK | BLOCK`,
        `${FILE}: guardrails.pii.stream_output: must be one of buffer | report`,
        `${FILE}: guardrails.prompt_injection.threshold: must be a number from 0 to 1`,
        `${FILE}: guardrails.prompt_injection.roles[1]: must be one of system | developer | user | assistant | tool`,
      ]),
    );
    expect(problems.some((p) => p.startsWith(`${FILE}: guardrails.pii.score_threshold.ALL: `))).toBe(true);
    expect(problems.some((p) => p.startsWith(`${FILE}: guardrails.prompt_injection.timeout_ms: `))).toBe(
      true,
    );
  });

  it("an unknown entity name in entities is refused", () => {
    const problems = problemsOf(() =>
      parsePolicy("guardrails:\n  pii:\n    entities: {EMAIL: MASK}\n", FILE),
    );
    expect(problems[0]).toMatch(
      /^litellm\/guardrails\/policy\.yaml: guardrails\.pii\.entities: unknown threshold key\(s\): EMAIL;/,
    );
  });

  it("YAML syntax errors, empty files and missing files are reported with the file", () => {
    expect(problemsOf(() => parsePolicy("guardrails: [\n", FILE))[0]).toMatch(
      /^litellm\/guardrails\/policy\.yaml: YAML syntax error/,
    );
    expect(problemsOf(() => parsePolicy("", FILE))[0]).toContain(`${FILE}: (top level): the file is empty`);
    expect(problemsOf(() => loadGuardrailPolicy({ policyPath: "/nonexistent/policy.yaml" }))[0]).toBe(
      "/nonexistent/policy.yaml: cannot read the guardrail policy (ENOENT); set GUARDRAIL_POLICY to a policy.yaml (the checkout ships litellm/guardrails/policy.yaml)",
    );
  });

  it("a section left out is off; keys left out take the defaults", () => {
    const { policy } = loadGuardrailPolicy({
      policyPath: writePolicy("guardrails:\n  pii: {mode: monitor}\n"),
    });
    expect(policy.promptInjection).toBeUndefined();
    expect(policy.pii).toMatchObject({
      mode: "monitor",
      scope: "input",
      onError: "fail_closed",
      streamOutput: "buffer",
    });
    expect(policy.pii?.entities.CREDIT_CARD).toBe("BLOCK");
  });
});

describe("LiteLLM guardrails list (config.yaml)", () => {
  const CONFIG = "litellm/config.yaml";
  const presidio = (params: Record<string, unknown>, name = "presidio-pii") => ({
    guardrail_name: name,
    litellm_params: { guardrail: "presidio", ...params },
  });

  it("maps a presidio entry into the PII guardrail", () => {
    const { pii } = readLiteLLMGuardrails(
      [
        presidio({
          mode: "pre_call",
          default_on: true,
          pii_entities_config: { CREDIT_CARD: "BLOCK", EMAIL_ADDRESS: "MASK" },
          presidio_score_thresholds: { ALL: 0.6 },
        }),
      ],
      CONFIG,
    );
    expect(pii?.name).toBe("presidio-pii");
    expect(pii?.section).toEqual({
      mode: "enforce",
      scope: "input",
      entities: { CREDIT_CARD: "BLOCK", EMAIL_ADDRESS: "MASK" },
      score_threshold: { ALL: 0.6 },
    });
  });

  it.each([
    [
      { mode: "post_call", default_on: true },
      { mode: "enforce", scope: "output" },
    ],
    [
      { mode: ["pre_call", "post_call"], default_on: true },
      { mode: "enforce", scope: "both" },
    ],
    [
      { mode: "during_call", default_on: true, presidio_filter_scope: "both" },
      { mode: "enforce", scope: "both" },
    ],
    [
      { mode: "logging_only", default_on: true },
      { mode: "monitor", scope: "input" },
    ],
    [{ mode: "pre_call" }, { mode: "off", scope: "input" }],
  ])("litellm_params %j → %j", (params, expected) => {
    expect(readLiteLLMGuardrails([presidio(params)], CONFIG).pii?.section).toEqual(expected);
  });

  it("two presidio entries (pre and post) merge into one guardrail with scope both", () => {
    const entities = { EMAIL_ADDRESS: "MASK" };
    const { pii } = readLiteLLMGuardrails(
      [
        presidio({ mode: "pre_call", default_on: true, pii_entities_config: entities }, "pii-in"),
        presidio({ mode: "post_call", default_on: true, pii_entities_config: entities }, "pii-out"),
      ],
      CONFIG,
    );
    expect(pii?.name).toBe("pii-in");
    expect(pii?.section.scope).toBe("both");
  });

  it("refuses other guardrail types, bad values and unknown entities, naming config.yaml paths", () => {
    const problems = problemsOf(() =>
      readLiteLLMGuardrails(
        [
          { guardrail_name: "lakera", litellm_params: { guardrail: "lakera_v2", mode: "pre_call" } },
          presidio({ mode: "sometimes" }),
          presidio({ pii_entities_config: { CREDIT: "BLOCK" } }),
          "not a mapping",
        ],
        CONFIG,
      ),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        `${CONFIG}: guardrails[0].litellm_params.guardrail: guardrail type "lakera_v2" is not supported by this gateway; supported: presidio (prompt injection is configured in the guardrail policy, guardrails.prompt_injection)`,
        `${CONFIG}: guardrails[1].litellm_params.mode: must be one of pre_call | post_call | during_call | logging_only (or a list of them)`,
      ]),
    );
    expect(
      problems.some((p) =>
        p.startsWith(
          `${CONFIG}: guardrails[2].litellm_params.pii_entities_config: unknown threshold key(s): CREDIT`,
        ),
      ),
    ).toBe(true);
    expect(problems.some((p) => p.startsWith(`${CONFIG}: guardrails[3]: `))).toBe(true);
  });

  it("warns about litellm_params it ignores", () => {
    const { warnings } = readLiteLLMGuardrails(
      [presidio({ default_on: true, presidio_analyzer_api_base: "http://x", output_parse_pii: true })],
      CONFIG,
    );
    expect(warnings).toEqual([
      `${CONFIG}: guardrails[0].litellm_params.presidio_analyzer_api_base: ignored (set PII_ANALYZER_API_BASE in the gateway's environment instead)`,
      `${CONFIG}: guardrails[0].litellm_params.output_parse_pii: ignored (masked values are not restored in the answer)`,
    ]);
  });

  it("merges with policy.yaml when they agree; the LiteLLM name is kept", () => {
    const policyPath = writePolicy("guardrails:\n  pii:\n    mode: enforce\n    allow_list: [a@b.co]\n");
    const { policy } = loadGuardrailPolicy({
      policyPath,
      litellm: {
        file: CONFIG,
        guardrails: [
          presidio({ mode: "pre_call", default_on: true, pii_entities_config: { EMAIL_ADDRESS: "MASK" } }),
        ],
      },
    });
    expect(policy.pii).toMatchObject({
      name: "presidio-pii",
      mode: "enforce",
      allowList: ["a@b.co"],
      entities: { EMAIL_ADDRESS: "MASK" },
    });
  });

  it("a conflict between the two files refuses start-up naming both", () => {
    const policyPath = writePolicy(
      "guardrails:\n  pii:\n    mode: enforce\n    entities: {EMAIL_ADDRESS: BLOCK}\n",
    );
    const problems = problemsOf(() =>
      loadGuardrailPolicy({
        policyPath,
        litellm: {
          file: CONFIG,
          guardrails: [
            presidio({ mode: "pre_call", default_on: true, pii_entities_config: { EMAIL_ADDRESS: "MASK" } }),
          ],
        },
      }),
    );
    expect(problems).toEqual([
      `${policyPath}: guardrails.pii.entities conflicts with ${CONFIG}: guardrails[0].litellm_params.pii_entities_config (the two files configure the PII guardrail differently; set it in one of them, or make them agree)`,
    ]);
  });

  it("default_on absent (off in LiteLLM) conflicts with an enforcing policy.yaml", () => {
    const policyPath = writePolicy("guardrails:\n  pii:\n    mode: enforce\n");
    const problems = problemsOf(() =>
      loadGuardrailPolicy({
        policyPath,
        litellm: { file: CONFIG, guardrails: [presidio({ mode: "pre_call" })] },
      }),
    );
    expect(problems[0]).toContain(
      `${policyPath}: guardrails.pii.mode conflicts with ${CONFIG}: guardrails[0].litellm_params.mode`,
    );
  });
});

describe("per-key modes (metadata.guardrails)", () => {
  it("validates names and modes", () => {
    const names = ["pii", "prompt_injection"];
    expect(
      validateKeyGuardrails({ guardrails: { pii: "monitor", prompt_injection: "off" } }, names),
    ).toBeUndefined();
    expect(validateKeyGuardrails({ team: "x" }, names)).toBeUndefined();
    expect(validateKeyGuardrails({ guardrails: { pii: "loud" } }, names)).toBe(
      "metadata.guardrails.pii must be one of enforce | monitor | off",
    );
    expect(validateKeyGuardrails({ guardrails: { toxicity: "off" } }, names)).toBe(
      "metadata.guardrails.toxicity: unknown guardrail; known: pii, prompt_injection",
    );
    expect(validateKeyGuardrails({ guardrails: ["pii"] }, names)).toMatch(/must be a mapping/);
  });

  it("a valid override wins; an invalid one leaves the policy's mode", () => {
    expect(effectiveMode("pii", "enforce", { guardrails: { pii: "monitor" } })).toBe("monitor");
    expect(effectiveMode("pii", "enforce", { guardrails: { pii: "of" } })).toBe("enforce");
    expect(effectiveMode("pii", "off", { guardrails: { pii: "enforce" } })).toBe("enforce");
    expect(effectiveMode("pii", "enforce", undefined)).toBe("enforce");
  });
});
