import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  ConfigError,
  type LoadedModelConfig,
  loadModelConfig,
} from "../../../../services/gateway/src/config/load-model-config.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "model-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
/** Writes `text` to a fresh file and returns its path. */
function file(text: string): string {
  counter += 1;
  const path = join(dir, `config-${counter}.yaml`);
  writeFileSync(path, text);
  return path;
}

/** Loads `text` as a config file; returns the result and the file path. */
function load(text: string, env: NodeJS.ProcessEnv = {}): LoadedModelConfig {
  return loadModelConfig(file(text), env, { now: () => 1_700_000_000_500 });
}

/** The ConfigError thrown by loading `text`, with the file path, so messages can be checked against it. */
function fail(text: string, env: NodeJS.ProcessEnv = {}): { error: ConfigError; path: string } {
  const path = file(text);
  try {
    loadModelConfig(path, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return { error: error as ConfigError, path };
  }
  throw new Error("expected loadModelConfig to throw");
}

/** A local model without a price (it draws the one "no price" warning). */
const local = `
model_list:
  - model_name: general
    litellm_params:
      model: openai/llama3
      api_base: http://127.0.0.1:11434/v1/
`;
const noPrice = expect.stringMatching(
  /^model_list\[0\] in .* \(line 3, column 5\): no price is known for openai\/llama3 \(model_name "general"\), so its calls are recorded with spend 0 and budgets do not limit it; set litellm_params\.input_cost_per_token and output_cost_per_token/,
);

describe("loadModelConfig: files that cannot be read", () => {
  it("names a missing file and GATEWAY_CONFIG", () => {
    const path = join(dir, "nope.yaml");
    expect(() => loadModelConfig(path, {})).toThrow(
      `model config file ${path} does not exist; set GATEWAY_CONFIG to the path of your config.yaml`,
    );
  });

  it("names a directory given as the file", () => {
    const path = join(dir, "a-directory");
    mkdirSync(path);
    expect(() => loadModelConfig(path, {})).toThrow(`model config ${path} is a directory`);
  });

  it("names a path that cannot be opened, with the system's reason", () => {
    const path = join(file("model_list: []"), "config.yaml");
    expect(() => loadModelConfig(path, {})).toThrow(`cannot read model config ${path}: ENOTDIR`);
  });

  it.skipIf(process.getuid?.() === 0)(
    "names a file without read permission (skipped as root, who can read any file)",
    () => {
      const path = file("model_list: []");
      chmodSync(path, 0o000);
      expect(() => loadModelConfig(path, {})).toThrow(`cannot read model config ${path}: EACCES`);
    },
  );

  it("reports a YAML syntax error with the file, line and column", () => {
    const { error, path } = fail("model_list:\n  - model_name: general\n    litellm_params: [unclosed\n");
    expect(error.message).toMatch(new RegExp(`^YAML syntax error in ${path} at line \\d+, column \\d+: .+`));
    expect(error.file).toBe(path);
  });

  it("refuses a file whose aliases expand without bound", () => {
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (const [prev, next] of ["ab", "bc", "cd", "de", "ef"])
      bomb.push(
        `${next}: &${next} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`,
      );
    const { error, path } = fail(`${bomb.join("\n")}\n`);
    expect(error.message).toMatch(new RegExp(`^YAML error in ${path}: .*alias`, "i"));
  });

  it("reports a duplicated key as a YAML error at its line", () => {
    const { error } = fail("model_list: []\nrouter_settings: {}\nmodel_list: []\n");
    expect(error.message).toMatch(/YAML syntax error in .* at line 3, column 1: Map keys must be unique/);
  });
});

describe("loadModelConfig: empty registries are valid", () => {
  it.each([
    ["model_list: []", "an empty list"],
    ["model_list:", "a null model_list"],
    ["router_settings:\n  num_retries: 1", "no model_list"],
    ["", "an empty file"],
    ["# only a comment\n", "a file of comments"],
  ])("%s (%s) loads with no deployments and default routing", (text) => {
    const config = load(text);
    expect(config.deployments).toEqual([]);
    expect(config.router.routingStrategy).toBe("simple-shuffle");
    expect(config.router.fallbacks).toEqual({});
  });

  it("applies the documented defaults (config/types.ts)", () => {
    expect(load("model_list: []").router).toEqual({
      numRetries: 2,
      timeoutMs: 600_000,
      allowedFails: 3,
      cooldownMs: 5_000,
      fallbacks: {},
      routingStrategy: "simple-shuffle",
      tagFiltering: false,
      tagMatchAny: true,
    });
    expect(load("model_list: []").guardrails).toEqual([]);
  });
});

describe("loadModelConfig: deployments", () => {
  it("reads an OpenAI-compatible server, strips the trailing slash, stamps created in unix seconds", () => {
    const config = load(local);
    expect(config.sourcePath).toMatch(/config-\d+\.yaml$/);
    expect(config.deployments).toEqual([
      {
        id: "general-0",
        modelName: "general",
        provider: "openai",
        upstreamModel: "llama3",
        apiBase: "http://127.0.0.1:11434/v1",
        tags: [],
        created: 1_700_000_000,
      },
    ]);
    expect(config.warnings).toEqual([noPrice]);
  });

  it("keeps slashes inside the upstream model name", () => {
    const config = load(local.replace("openai/llama3", "openai/meta-llama/Llama-3.1-8B-Instruct"));
    expect(config.deployments[0]?.upstreamModel).toBe("meta-llama/Llama-3.1-8B-Instruct");
  });

  it("reads limits, costs, timeouts (seconds → ms), weight, id and tags from both places", () => {
    const config = load(`
router_settings:
  enable_tag_filtering: true
model_list:
  - model_name: general
    litellm_params:
      model: openai/llama3
      api_base: http://gpu:8000/v1
      rpm: 600
      tpm: 200000
      input_cost_per_token: 0.000001
      output_cost_per_token: 0.000002
      timeout: 30
      stream_timeout: 2.5
      weight: 3
      tags: [fast, npu]
    model_info:
      id: gpu-1
      tags: [npu, local]
      mode: chat
      base_model: llama-3.1-8b
      max_tokens: 8192
`);
    expect(config.deployments[0]).toMatchObject({
      id: "gpu-1",
      rpm: 600,
      tpm: 200_000,
      inputCostPerToken: 0.000001,
      outputCostPerToken: 0.000002,
      timeoutMs: 30_000,
      streamTimeoutMs: 2_500,
      weight: 3,
      tags: ["fast", "npu", "local"],
      baseModel: "llama-3.1-8b",
    });
    // max_tokens is model_info metadata LiteLLM shows in /model/info; this gateway says it does not use it
    expect(config.warnings).toEqual([
      expect.stringMatching(/^model_list\[0\]\.model_info in .*: max_tokens is ignored by this gateway/),
    ]);
  });

  it("reads model_info.ignores_output_cap (the gateway's own key) as a boolean, with a clear message otherwise", () => {
    const priced = `${local}      input_cost_per_token: 0.5\n      output_cost_per_token: 1\n`;
    const declared = load(`${priced}    model_info:\n      ignores_output_cap: true\n`);
    expect(declared.deployments[0]?.ignoresOutputCap).toBe(true);
    expect(declared.warnings).toEqual([]);
    expect(
      load(`${priced}    model_info:\n      ignores_output_cap: false\n`).deployments[0],
    ).not.toHaveProperty("ignoresOutputCap");
    expect(load(priced).deployments[0]).not.toHaveProperty("ignoresOutputCap");
    const { error, path } = fail(`${priced}    model_info:\n      ignores_output_cap: "yes"\n`);
    expect(error.message).toContain(
      `expected true or false, got a string at model_list[0].model_info.ignores_output_cap in ${path} (line 10, column 7)`,
    );
  });

  it("takes costs from model_info when litellm_params has none (LiteLLM accepts both places)", () => {
    const config = load(
      `${local}    model_info:\n      input_cost_per_token: 0.5\n      output_cost_per_token: 1\n`,
    );
    expect(config.deployments[0]).toMatchObject({ inputCostPerToken: 0.5, outputCostPerToken: 1 });
  });

  it("reads LiteLLM's per-part price keys from litellm_params and model_info, litellm_params winning key by key", () => {
    const config = load(
      `${local}      input_cost_per_token: 0.000003
      output_cost_per_token: 0.000015
      cache_read_input_token_cost: 3.0e-7
      cache_creation_input_token_cost: "0.00000375"
      input_cost_per_token_above_200k_tokens: 0.000006
    model_info:
      cache_read_input_token_cost: 1
      cache_creation_input_token_cost_above_1hr: 0.000006
      input_cost_per_audio_token: 0.00004
      output_cost_per_audio_token: 0.00008
      output_cost_per_reasoning_token: 0.00001
      output_cost_per_token_above_200k_tokens: 0.0000225
`,
    );
    expect(config.warnings).toEqual([]);
    expect(config.deployments[0]?.priceParts).toEqual({
      cacheRead: 3e-7,
      cacheWrite: 3.75e-6,
      cacheWrite1h: 6e-6,
      inputAudio: 4e-5,
      outputAudio: 8e-5,
      outputReasoning: 1e-5,
      inputAbove200k: 6e-6,
      outputAbove200k: 2.25e-5,
    });
    const bad = fail(`${local}      cache_read_input_token_cost: -1\n`);
    expect(bad.error.message).toContain("cache_read_input_token_cost");
  });

  it("defaults api_base per provider: OpenAI's and Anthropic's public APIs", () => {
    const config = load(
      `
model_list:
  - model_name: gpt-4o
    litellm_params: { model: openai/gpt-4o, api_key: os.environ/OPENAI_API_KEY }
  - model_name: claude
    litellm_params: { model: anthropic/claude-sonnet-4-5, api_key: os.environ/ANTHROPIC_API_KEY }
`,
      { OPENAI_API_KEY: "sk-openai", ANTHROPIC_API_KEY: "sk-ant" },
    );
    expect(config.deployments.map((d) => [d.provider, d.apiBase, d.apiKey, d.apiKeyEnv])).toEqual([
      ["openai", "https://api.openai.com/v1", "sk-openai", "OPENAI_API_KEY"],
      ["anthropic", "https://api.anthropic.com/v1", "sk-ant", "ANTHROPIC_API_KEY"],
    ]);
  });

  it("falls back to the provider's conventional key variable for its public API, as LiteLLM does", () => {
    const config = load(
      "model_list:\n  - model_name: gpt-4o\n    litellm_params: { model: openai/gpt-4o }\n",
      {
        OPENAI_API_KEY: "sk-openai",
      },
    );
    expect(config.deployments[0]).toMatchObject({ apiKey: "sk-openai", apiKeyEnv: "OPENAI_API_KEY" });
  });

  it("calls a server with an api_base and no api_key without a key", () => {
    const deployment = load(local, { OPENAI_API_KEY: "sk-unrelated" }).deployments[0];
    expect(deployment?.apiKey).toBeUndefined();
    expect(deployment?.apiKeyEnv).toBeUndefined();
  });

  it("appends /v1 to an Anthropic api_base without a path, with a warning", () => {
    const config = load(
      "model_list:\n  - model_name: c\n    litellm_params: { model: anthropic/claude, api_base: 'https://api.anthropic.com/', api_key: k }\n",
    );
    expect(config.deployments[0]?.apiBase).toBe("https://api.anthropic.com/v1");
    expect(config.warnings.join("\n")).toContain("api_base has no path; using <api_base>/v1");
  });

  it("warns about a key written in the file without printing it", () => {
    const config = load(
      "model_list:\n  - model_name: g\n    litellm_params: { model: openai/gpt-4o, api_base: 'http://h/v1', api_key: sk-LITERAL-SECRET }\n",
    );
    expect(config.deployments[0]?.apiKey).toBe("sk-LITERAL-SECRET");
    expect(config.warnings).toHaveLength(1);
    expect(config.warnings[0]).toMatch(
      /^model_list\[0\]\.litellm_params\.api_key in .* \(line 3, column \d+\): api_key is written/,
    );
    expect(config.warnings[0]).not.toContain("LITERAL-SECRET");
  });
});

describe("loadModelConfig: load-balanced groups and ids", () => {
  const group = `
model_list:
  - model_name: general
    litellm_params: { model: openai/a, api_base: 'http://a/v1' }
  - model_name: other
    litellm_params: { model: openai/b, api_base: 'http://b/v1' }
  - model_name: general
    litellm_params: { model: openai/c, api_base: 'http://c/v1' }
`;

  it("keeps every entry of a model_name, in file order, with ids numbered within the group", () => {
    const config = load(group);
    expect(config.deployments.map((d) => [d.modelName, d.id, d.apiBase])).toEqual([
      ["general", "general-0", "http://a/v1"],
      ["other", "other-0", "http://b/v1"],
      ["general", "general-1", "http://c/v1"],
    ]);
  });

  it("derives the same ids on every load (stable across restarts)", () => {
    expect(load(group).deployments.map((d) => d.id)).toEqual(load(group).deployments.map((d) => d.id));
  });

  it("refuses two entries with the same model_info.id, naming both paths", () => {
    const { error, path } = fail(`
model_list:
  - model_name: a
    litellm_params: { model: openai/a, api_base: 'http://a/v1' }
    model_info: { id: same }
  - model_name: b
    litellm_params: { model: openai/b, api_base: 'http://b/v1' }
    model_info: { id: same }
`);
    expect(error.message).toBe(
      `deployment id "same" is already used at model_list[0].model_info.id; ids must be unique (set a distinct model_info.id) at model_list[1].model_info.id in ${path} (line 8, column 19)`,
    );
  });

  it("refuses an explicit id that collides with a derived one", () => {
    const { error } = fail(`
model_list:
  - model_name: general
    litellm_params: { model: openai/a, api_base: 'http://a/v1' }
  - model_name: other
    litellm_params: { model: openai/b, api_base: 'http://b/v1' }
    model_info: { id: general-0 }
`);
    expect(error.message).toContain('deployment id "general-0" is already used at model_list[0]');
  });

  it("accepts a numeric model_info.id as a string", () => {
    const config = load(`${local}    model_info: { id: 42 }\n`);
    expect(config.deployments[0]?.id).toBe("42");
  });
});

describe("loadModelConfig: os.environ/VAR references", () => {
  const twoEntries = `
model_list:
  - model_name: general
    litellm_params:
      model: openai/llama3
      api_base: os.environ/GENERAL_API_BASE
      api_key: os.environ/GENERAL_API_KEY
  - model_name: gpt-4o
    litellm_params:
      model: openai/gpt-4o
      api_key: os.environ/OPENAI_API_KEY
  - model_name: gpt-4o
    litellm_params:
      model: openai/gpt-4o
      api_key: os.environ/OPENAI_API_KEY
`;
  const vars = { GENERAL_API_BASE: "http://vllm:8000/v1/", GENERAL_API_KEY: "k1", OPENAI_API_KEY: "k2" };

  it("resolves keys and api_base from the environment", () => {
    const config = load(twoEntries, vars);
    expect(config.deployments.map((d) => [d.apiBase, d.apiKey, d.apiKeyEnv])).toEqual([
      ["http://vllm:8000/v1", "k1", "GENERAL_API_KEY"],
      ["https://api.openai.com/v1", "k2", "OPENAI_API_KEY"],
      ["https://api.openai.com/v1", "k2", "OPENAI_API_KEY"],
    ]);
  });

  it("refuses an unset provider key, naming the file, the variable, every entry using it and what to do", () => {
    const { error, path } = fail(twoEntries, { GENERAL_API_BASE: "http://vllm/v1", GENERAL_API_KEY: "k" });
    expect(error.message).toBe(
      `environment variable OPENAI_API_KEY is unset or empty (or still "replace-me"), but ${path} uses it: ` +
        `model "gpt-4o" (model_list[1].litellm_params.api_key (line 11, column 7)), ` +
        `model "gpt-4o" (model_list[2].litellm_params.api_key (line 15, column 7)). ` +
        `Set OPENAI_API_KEY in .env (or the gateway's environment), or remove these entries from ${path} ` +
        "(and rebuild the gateway image if it runs in a container).",
    );
  });

  it.each([
    ["empty", ""],
    ["blank", "  "],
    ["the replace-me placeholder", "replace-me"],
  ])("treats an %s key like an unset one", (_, value) => {
    const { error } = fail(twoEntries, { ...vars, OPENAI_API_KEY: value });
    expect(error.message).toContain("environment variable OPENAI_API_KEY is unset or empty");
    expect(error.problems).toHaveLength(1);
  });

  it("refuses an unset api_base variable the same way, and reports every variable at once", () => {
    const { error, path } = fail(twoEntries, { OPENAI_API_KEY: "k" });
    expect(error.problems).toHaveLength(2);
    expect(error.message).toContain(`2 problems in model config ${path}:`);
    expect(error.problems[0]).toContain(
      `environment variable GENERAL_API_BASE is unset or empty (or still "replace-me"), but ${path} uses it: model "general" (model_list[0].litellm_params.api_base`,
    );
    expect(error.problems[0]).toContain("or remove this entry from");
    expect(error.problems[1]).toContain("environment variable GENERAL_API_KEY is unset");
  });

  it("requires OPENAI_API_KEY for OpenAI's public API when the entry names no key", () => {
    const { error } = fail(
      "model_list:\n  - model_name: gpt-4o\n    litellm_params: { model: openai/gpt-4o }\n",
    );
    expect(error.message).toContain(
      'environment variable OPENAI_API_KEY is unset or empty (or still "replace-me"), but',
    );
    expect(error.message).toContain('model "gpt-4o" (model_list[0].litellm_params.api_key)');
  });

  it("reads environment_variables from the file, and the process environment wins over it", () => {
    const text = `
environment_variables:
  GENERAL_API_BASE: http://from-file/v1
  GENERAL_API_KEY: from-file
model_list:
  - model_name: general
    litellm_params: { model: openai/x, api_base: os.environ/GENERAL_API_BASE, api_key: os.environ/GENERAL_API_KEY }
`;
    expect(load(text).deployments[0]).toMatchObject({ apiBase: "http://from-file/v1", apiKey: "from-file" });
    expect(load(text, { GENERAL_API_KEY: "from-env" }).deployments[0]).toMatchObject({
      apiBase: "http://from-file/v1",
      apiKey: "from-env",
    });
  });

  it("accepts numbers from variables for numeric fields", () => {
    const config = load(
      `${local}      rpm: os.environ/GENERAL_RPM\n      timeout: os.environ/GENERAL_TIMEOUT\n`,
      {
        GENERAL_RPM: "120",
        GENERAL_TIMEOUT: "1.5",
      },
    );
    expect(config.deployments[0]).toMatchObject({ rpm: 120, timeoutMs: 1_500 });
  });

  it("refuses a variable holding something that is not a URL, without printing its value", () => {
    const { error } = fail(twoEntries, { ...vars, GENERAL_API_BASE: "not a url SECRETISH" });
    expect(error.message).toContain(
      "expected an http(s) URL such as http://host:8000/v1 (the value of GENERAL_API_BASE) at model_list[0].litellm_params.api_base",
    );
    expect(error.message).not.toContain("SECRETISH");
  });

  it("never prints the value of a resolved variable in warnings", () => {
    const config = load(`${local}      temperature: 0.2\n`, { UNRELATED: "x" });
    expect(config.warnings.join("\n")).not.toContain("127.0.0.1");
  });
});

describe("loadModelConfig: providers", () => {
  it("refuses an unsupported provider, listing the supported ones", () => {
    const { error, path } = fail(local.replace("openai/llama3", "azure/gpt-4o"));
    expect(error.message).toBe(
      `provider "azure" is not supported; supported: openai/<model>, anthropic/<model> at model_list[0].litellm_params.model in ${path} (line 5, column 7)`,
    );
  });

  it("explains how to register an OpenAI-compatible server written with its LiteLLM prefix", () => {
    const { error } = fail(local.replace("openai/llama3", "ollama/llama3"));
    expect(error.message).toContain(
      'provider "ollama" is not supported; supported: openai/<model>, anthropic/<model>; ollama speaks OpenAI\'s API: write openai/llama3 with api_base set to its /v1 URL',
    );
  });

  it("reports an unsupported provider even when the entry's variables are unset too", () => {
    const { error } = fail(
      "model_list:\n  - model_name: g\n    litellm_params: { model: azure/x, api_key: os.environ/AZURE_KEY }\n",
    );
    expect(error.problems).toEqual([
      expect.stringContaining('provider "azure" is not supported'),
      expect.stringContaining("environment variable AZURE_KEY is unset"),
    ]);
  });

  it("refuses a model without a provider prefix", () => {
    const { error } = fail(local.replace("openai/llama3", "gpt-4o"));
    expect(error.message).toContain('model "gpt-4o" has no provider prefix; supported: openai/<model>');
  });

  it("refuses a wildcard model_name", () => {
    const { error } = fail(local.replace("model_name: general", 'model_name: "*"'));
    expect(error.message).toContain(
      "wildcard model names are not supported; register each model by name at model_list[0].model_name",
    );
  });

  it("refuses an api_base that is not http(s)", () => {
    const { error } = fail(local.replace("http://127.0.0.1:11434/v1/", "ftp://host/v1"));
    expect(error.message).toContain(
      "expected an http(s) URL such as http://host:8000/v1 at model_list[0].litellm_params.api_base",
    );
  });
});

describe("loadModelConfig: wrong shapes and types", () => {
  it("names the path, line, expected and actual type of a wrong value", () => {
    const { error, path } = fail(`${local}      rpm: fast\n`);
    expect(error.message).toBe(
      `expected a number, got a string at model_list[0].litellm_params.rpm in ${path} (line 7, column 7)`,
    );
  });

  it.each([
    ["model_list: {general: {}}", "expected a list of model entries, got a mapping at model_list"],
    [
      "- just\n- a list\n",
      "expected a mapping (model_list, router_settings, …), got a list at the top level",
    ],
    [
      "model_list:\n  - general\n",
      "expected a model entry (a mapping with model_name and litellm_params), got a string at model_list[0]",
    ],
    [
      "model_list:\n  - litellm_params: { model: openai/x }\n",
      "model_name is missing (the name clients send as `model`) at model_list[0].model_name",
    ],
    [
      "model_list:\n  - model_name: g\n",
      "litellm_params is missing (it needs at least `model: provider/name`) at model_list[0].litellm_params",
    ],
    [
      "model_list:\n  - model_name: g\n    litellm_params: {}\n",
      "is required but missing at model_list[0].litellm_params.model",
    ],
    [
      "model_list:\n  - model_name: 7\n    litellm_params: { model: openai/x, api_base: 'http://h/v1' }\n",
      "expected a non-empty string, got a number at model_list[0].model_name",
    ],
    [`${local}      tpm: 1.5\n`, "expected an integer, got a number at model_list[0].litellm_params.tpm"],
    [`${local}      rpm: -1\n`, "must be at least 0 at model_list[0].litellm_params.rpm"],
    [`${local}      timeout: 0\n`, "must be greater than 0 at model_list[0].litellm_params.timeout"],
    [
      `${local}    model_info: { tags: npu }\n`,
      "expected a list, got a string at model_list[0].model_info.tags",
    ],
    [`${local}    model_info: [a]\n`, "expected a mapping, got a list at model_list[0].model_info"],
    ["router_settings: [simple-shuffle]\n", "expected a mapping, got a list at router_settings"],
    [
      "router_settings:\n  num_retries: many\n",
      "expected a number, got a string at router_settings.num_retries",
    ],
    [
      "litellm_settings:\n  request_timeout: '10'\n",
      "expected a number, got a string at litellm_settings.request_timeout",
    ],
    [
      "litellm_settings:\n  fallbacks: {a: [b]}\n",
      "expected a list, got a mapping at litellm_settings.fallbacks",
    ],
    [
      "general_settings:\n  master_key: 1234\n",
      "expected a string, got a number at general_settings.master_key",
    ],
    ["environment_variables: [A]\n", "expected a mapping, got a list at environment_variables"],
  ])("%j → %s", (text, message) => {
    const { error, path } = fail(text);
    expect(error.message).toContain(`${message} in ${path}`);
  });

  it("reports every problem of a file in one error", () => {
    const { error } = fail(`
model_list:
  - model_name: a
    litellm_params: { model: openai/a, api_base: 'http://a/v1', rpm: x }
  - model_name: b
    litellm_params: { model: bedrock/b }
router_settings: { num_retries: -1 }
`);
    expect(error.problems).toHaveLength(3);
    expect(error.message.split("\n")[0]).toMatch(/^3 problems in model config .*:$/);
  });
});

describe("loadModelConfig: unknown, ignored and unsupported keys", () => {
  it("refuses unknown keys, naming them, the path, the file and the known keys", () => {
    const { error, path } = fail(`${local}      api_bsae: http://typo/v1\n      colour: red\n`);
    expect(error.message).toMatch(
      new RegExp(
        `^unknown key\\(s\\) "api_bsae" \\(did you mean "api_base"\\?\\), "colour" at model_list\\[0\\]\\.litellm_params in ${path} \\(line 7, column 7\\); known keys are: model, api_base, api_key, rpm, tpm,`,
      ),
    );
  });

  it("suggests the known key a misspelt one is closest to", () => {
    const { error } = fail(`${local}      temprature: 0.1\n`);
    expect(error.message).toMatch(
      /^unknown key\(s\) "temprature" \(did you mean "temperature"\?\) at model_list\[0\]\.litellm_params in /,
    );
  });

  it.each([
    ["modellist: []\n", "the top level", "model_list, router_settings, litellm_settings, general_settings"],
    [`${local}    model_infos: {}\n`, "model_list[0]", "model_name, litellm_params, model_info"],
    ["router_settings:\n  routing_stratgy: least-busy\n", "router_settings", "routing_strategy, num_retries"],
    ["litellm_settings:\n  num_retry: 1\n", "litellm_settings", "num_retries, request_timeout"],
    [
      "general_settings:\n  masterkey: sk-1\n",
      "general_settings",
      "master_key, stream_client_idle_timeout, database_url",
    ],
  ])("%j: unknown key at %s", (text, at, known) => {
    const { error } = fail(text);
    expect(error.message).toMatch(/^unknown key\(s\) "/);
    expect(error.message).toContain(` at ${at} in `);
    expect(error.message).toContain(`known keys are: ${known}`);
  });

  it("accepts LiteLLM keys it ignores and says so in warnings", () => {
    const config = load(`${local}      temperature: 0.2
litellm_settings:
  success_callback: [langfuse]
  drop_params: true
  set_verbose: true
general_settings:
  database_url: postgres://u:SECRET@db/litellm
router_settings:
  redis_host: redis
`);
    expect(config.deployments).toHaveLength(1);
    const text = config.warnings.join("\n");
    expect(config.warnings).toHaveLength(7);
    expect(config.warnings).toContainEqual(noPrice);
    expect(text).toMatch(
      /model_list\[0\]\.litellm_params\.temperature in .* \(line 7, column 7\): temperature is ignored/,
    );
    expect(text).toContain("litellm_settings.success_callback in");
    expect(text).toContain("success_callback is ignored by this gateway (callbacks are not loaded");
    expect(text).toContain("drop_params is ignored by this gateway");
    expect(text).toContain("set_verbose is ignored by this gateway (use LOG_LEVEL)");
    expect(text).toContain(
      "database_url is ignored by this gateway (set DATABASE_URL in the gateway's environment instead)",
    );
    expect(text).toContain("redis_host is ignored by this gateway (set REDIS_URL");
    expect(text).not.toContain("SECRET");
  });

  it("accepts free-form model_info metadata with a warning", () => {
    const config = load(`${local}    model_info: { supports_vision: true, description: local }\n`);
    expect(config.warnings).toEqual([
      expect.stringMatching(
        /^model_list\[0\]\.model_info in .*: supports_vision, description are ignored by this gateway/,
      ),
      noPrice,
    ]);
  });

  it("warns that a mode other than chat or embedding is not served", () => {
    const config = load(`${local}    model_info: { mode: image_generation }\n`);
    expect(config.warnings[0]).toContain(
      'mode "image_generation" is listed in /v1/models, but the gateway serves only chat and embedding models',
    );
    expect(load(`${local}    model_info: { mode: embedding }\n`).deployments[0]?.mode).toBe("embedding");
  });

  it.each([
    [
      "include: [other.yaml]\nmodel_list: []\n",
      "include is not supported by this gateway; merge the included files",
      "include",
    ],
    [
      `${local}      custom_llm_provider: openai\n`,
      "custom_llm_provider is not supported by this gateway; write the provider as the prefix",
      "model_list[0].litellm_params.custom_llm_provider",
    ],
    [
      `${local}      litellm_credential_name: cred\n`,
      "litellm_credential_name is not supported by this gateway",
      "model_list[0].litellm_params.litellm_credential_name",
    ],
  ])("refuses keys whose meaning would silently change: %j", (text, message, at) => {
    const { error } = fail(text);
    expect(error.message).toContain(message);
    expect(error.message).toContain(` at ${at} in `);
  });
});

describe("loadModelConfig: routing settings and fallbacks", () => {
  const groups = `
model_list:
  - model_name: general
    litellm_params: { model: openai/a, api_base: 'http://a/v1' }
  - model_name: gpt-4o
    litellm_params: { model: openai/b, api_base: 'http://b/v1' }
  - model_name: claude
    litellm_params: { model: openai/c, api_base: 'http://c/v1' }
`;

  it("reads LiteLLM's list of single-key maps into group → backups", () => {
    const config = load(
      `${groups}litellm_settings:\n  fallbacks:\n    - general: [gpt-4o, claude]\n    - gpt-4o: [claude]\n`,
    );
    expect(config.router.fallbacks).toEqual({ general: ["gpt-4o", "claude"], "gpt-4o": ["claude"] });
  });

  it("refuses a fallback naming a model_name that does not exist, listing the registered ones", () => {
    const { error, path } = fail(`${groups}litellm_settings:\n  fallbacks:\n    - general: [gpt-5]\n`);
    expect(error.message).toBe(
      `fallback model "gpt-5" is not a model_name in model_list (registered: general, gpt-4o, claude) at litellm_settings.fallbacks[0].general[0] in ${path} (line 11, column 17)`,
    );
  });

  it("refuses fallbacks for a group that does not exist", () => {
    const { error } = fail(`${groups}litellm_settings:\n  fallbacks:\n    - missing: [general]\n`);
    expect(error.message).toContain(
      'fallbacks name model "missing", which is not a model_name in model_list (registered: general, gpt-4o, claude) at litellm_settings.fallbacks[0].missing',
    );
  });

  it("refuses fallbacks in an empty registry", () => {
    const { error } = fail("model_list: []\nlitellm_settings:\n  fallbacks: [{general: [gpt-4o]}]\n");
    expect(error.problems).toHaveLength(2);
    expect(error.message).toContain("(none are registered)");
  });

  it("refuses a group that is its own fallback, and a group given twice", () => {
    const { error } = fail(
      `${groups}litellm_settings:\n  fallbacks: [{general: [general]}, {general: [claude]}]\n`,
    );
    expect(error.problems).toEqual([
      expect.stringContaining(
        'model "general" cannot be its own fallback at litellm_settings.fallbacks[0].general[0]',
      ),
      expect.stringContaining(
        'fallbacks for "general" are given twice at litellm_settings.fallbacks[1].general',
      ),
    ]);
  });

  it("refuses a fallback given as a string instead of a list", () => {
    const { error } = fail(`${groups}litellm_settings:\n  fallbacks:\n    - general: gpt-4o\n`);
    expect(error.message).toContain(
      "expected a list, got a string at litellm_settings.fallbacks[0].general in",
    );
  });

  it("reads litellm_settings, and router_settings wins where both are set (LiteLLM's rule)", () => {
    const fromLitellm = load(`${groups}litellm_settings:
  num_retries: 4
  request_timeout: 30
  allowed_fails: 1
  fallbacks: [{general: [claude]}]
`);
    expect(fromLitellm.router).toEqual({
      numRetries: 4,
      timeoutMs: 30_000,
      allowedFails: 1,
      cooldownMs: 5_000,
      fallbacks: { general: ["claude"] },
      routingStrategy: "simple-shuffle",
      tagFiltering: false,
      tagMatchAny: true,
    });
    const both = load(`${groups}litellm_settings:
  num_retries: 4
  request_timeout: 30
  fallbacks: [{general: [claude]}]
router_settings:
  num_retries: 0
  timeout: 2.5
  stream_timeout: 60
  allowed_fails: 5
  cooldown_time: 0.5
  fallbacks: [{gpt-4o: [general]}]
  routing_strategy: least-busy
  enable_tag_filtering: true
  tag_filtering_match_any: false
`);
    expect(both.router).toEqual({
      numRetries: 0,
      timeoutMs: 2_500,
      streamTimeoutMs: 60_000,
      allowedFails: 5,
      cooldownMs: 500,
      fallbacks: { "gpt-4o": ["general"] },
      routingStrategy: "least-busy",
      tagFiltering: true,
      tagMatchAny: false,
    });
  });

  it.each([
    ["simple-shuffle", "simple-shuffle"],
    ["least-busy", "least-busy"],
    ["usage-based-routing", "usage-based-routing"],
    ["usage-based-routing-v2", "usage-based-routing"],
  ])("reads routing_strategy %s", (name, strategy) => {
    const config = load(`router_settings:\n  routing_strategy: ${name}\n`);
    expect(config.router.routingStrategy).toBe(strategy);
    expect(config.warnings).toEqual([]);
  });

  it.each([
    [
      "latency-based-routing",
      "is not implemented by this gateway (the gateway keeps no per-deployment latency",
    ],
    ["cost-based-routing", "is not implemented by this gateway (deployments of one model group"],
    ["round-robin", "is not a routing strategy this gateway knows"],
  ])("refuses routing_strategy %s at start-up, naming the file and key", (name, why) => {
    const { error, path } = fail(`router_settings:\n  routing_strategy: ${name}\n`);
    expect(error.message).toContain(`routing_strategy "${name}" ${why}`);
    expect(error.message).toContain(
      `; use one of simple-shuffle, least-busy, usage-based-routing, usage-based-routing-v2 at router_settings.routing_strategy in ${path} (line 2, column 3)`,
    );
  });

  it("warns once when deployments carry tags but tag filtering is off (the tags would not route)", () => {
    const config = load(`${local}      tags: [npu]\n`);
    expect(config.warnings).toEqual([
      noPrice,
      expect.stringMatching(
        /^router_settings in .*: deployment\(s\) general-0 carry tags, but router_settings\.enable_tag_filtering is not true/,
      ),
    ]);
  });
});

describe("loadModelConfig: general_settings.master_key", () => {
  it("reads a literal key and resolves os.environ/VAR", () => {
    expect(load("general_settings:\n  master_key: sk-literal\n").masterKey).toBe("sk-literal");
    expect(
      load("general_settings:\n  master_key: os.environ/LITELLM_MASTER_KEY\n", {
        LITELLM_MASTER_KEY: "sk-env",
      }).masterKey,
    ).toBe("sk-env");
    expect(load("model_list: []").masterKey).toBeUndefined();
  });

  it("refuses an unset master_key variable when GATEWAY_MASTER_KEY is unset too", () => {
    const { error, path } = fail("general_settings:\n  master_key: os.environ/LITELLM_MASTER_KEY\n");
    expect(error.message).toContain("environment variable LITELLM_MASTER_KEY is unset or empty");
    expect(error.message).toContain("general_settings.master_key (line 2, column 3)");
    expect(error.message).toContain(
      `Set LITELLM_MASTER_KEY in .env (or the gateway's environment), or remove the line from ${path}.`,
    );
  });

  it("only warns about an unset master_key variable when GATEWAY_MASTER_KEY is set (it wins anyway)", () => {
    const config = load("general_settings:\n  master_key: os.environ/LITELLM_MASTER_KEY\n", {
      GATEWAY_MASTER_KEY: "sk-g",
    });
    expect(config.masterKey).toBeUndefined();
    expect(config.warnings[0]).toContain(
      "refers to LITELLM_MASTER_KEY, which is unset; GATEWAY_MASTER_KEY is used",
    );
  });

  it("warns, without printing it, when the master key does not start with sk-", () => {
    const config = load("general_settings:\n  master_key: NOTSK-secret\n");
    expect(config.warnings[0]).toContain("does not start with sk-");
    expect(config.warnings[0]).not.toContain("NOTSK");
  });
});

describe("loadModelConfig: general_settings.stream_client_idle_timeout", () => {
  it("reads seconds as ms, and leaves it unset (the pipeline's default) when absent", () => {
    expect(load("general_settings:\n  stream_client_idle_timeout: 2.5\n").streamClientIdleTimeoutMs).toBe(
      2500,
    );
    expect(load("model_list: []").streamClientIdleTimeoutMs).toBeUndefined();
  });

  it.each([
    ["0", "must be greater than 0"],
    ["-5", "must be greater than 0"],
    ["soon", "expected a number, got a string"],
  ])("refuses %s at start-up, naming the key and its line", (value, message) => {
    const { error } = fail(`general_settings:\n  stream_client_idle_timeout: ${value}\n`);
    expect(error.message).toContain(`${message} at general_settings.stream_client_idle_timeout in `);
    expect(error.message).toContain("(line 2, column 3)");
  });
});

describe("the shipped config files", () => {
  it("litellm/config.yaml loads with an empty environment: an empty registry, no warnings", () => {
    const config = loadModelConfig(join(repoRoot, "litellm/config.yaml"), {});
    expect(config.deployments).toEqual([]);
    expect(config.warnings).toEqual([]);
    expect(config.router.routingStrategy).toBe("simple-shuffle");
  });

  const exampleVars = {
    GENERAL_API_BASE: "http://127.0.0.1:11434/v1",
    GENERAL_2_API_BASE: "http://127.0.0.1:8000/v1/",
    GENERAL_API_KEY: "none",
    OPENAI_API_KEY: "sk-openai",
    ANTHROPIC_API_KEY: "sk-ant",
  };

  it("litellm/config.example.yaml loads with its variables set", () => {
    const config = loadModelConfig(join(repoRoot, "litellm/config.example.yaml"), exampleVars);
    expect(config.warnings).toEqual([]);
    expect(config.deployments.map((d) => [d.id, d.modelName, d.provider, d.apiBase])).toEqual([
      ["general-local", "general", "openai", "http://127.0.0.1:11434/v1"],
      ["general-1", "general", "openai", "http://127.0.0.1:8000/v1"],
      ["gpt-4o-0", "gpt-4o", "openai", "https://api.openai.com/v1"],
      ["claude-sonnet-0", "claude-sonnet", "anthropic", "https://api.anthropic.com/v1"],
    ]);
    expect(config.deployments[0]?.tags).toEqual(["npu"]);
    expect(config.router.fallbacks).toEqual({ general: ["gpt-4o"], "gpt-4o": ["claude-sonnet"] });
  });

  it("litellm/config.example.yaml refuses to start without them, naming each variable", () => {
    const error = (() => {
      try {
        loadModelConfig(join(repoRoot, "litellm/config.example.yaml"), {});
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error("expected a ConfigError");
    })();
    expect(error.problems.map((p) => p.match(/^environment variable (\w+)/)?.[1])).toEqual([
      "GENERAL_API_BASE",
      "GENERAL_API_KEY",
      "GENERAL_2_API_BASE",
      "OPENAI_API_KEY",
      "ANTHROPIC_API_KEY",
    ]);
  });
});

describe("loadModelConfig: guardrails and prices", () => {
  it("keeps the top-level guardrails list as raw data for the guardrails module, without a warning", () => {
    const config = load(`guardrails:
  - guardrail_name: pii-mask
    litellm_params: { guardrail: presidio, mode: pre_call, pii_entities_config: { EMAIL_ADDRESS: MASK } }
  - guardrail_name: injection
    litellm_params: { guardrail: prompt_injection, mode: pre_call }
`);
    expect(config.guardrails).toEqual([
      {
        guardrail_name: "pii-mask",
        litellm_params: {
          guardrail: "presidio",
          mode: "pre_call",
          pii_entities_config: { EMAIL_ADDRESS: "MASK" },
        },
      },
      { guardrail_name: "injection", litellm_params: { guardrail: "prompt_injection", mode: "pre_call" } },
    ]);
    expect(config.warnings).toEqual([]);
  });

  it("refuses a guardrails value that is not a list", () => {
    const { error, path } = fail("guardrails: { pii: presidio }\n");
    expect(error.message).toBe(
      `expected a list of guardrails (each with guardrail_name and litellm_params), got a mapping at guardrails in ${path} (line 1, column 1)`,
    );
  });

  it("prices a deployment by model_info.base_model when its own name is not a public model", () => {
    const config = load(`model_list:
  - model_name: a
    litellm_params: { model: openai/my-gpt4o-deployment, api_base: 'http://h/v1' }
    model_info: { base_model: openai/gpt-4o }
`);
    expect(config.deployments[0]?.baseModel).toBe("gpt-4o");
    expect(config.warnings).toEqual([]);
  });

  it("does not warn about models with a list price or with prices set (0 for a free model)", () => {
    const config = load(
      `model_list:
  - model_name: a
    litellm_params: { model: openai/gpt-4o-2024-08-06, api_key: k1 }
  - model_name: b
    litellm_params: { model: anthropic/claude-sonnet-4-5, api_key: k2 }
  - model_name: c
    litellm_params: { model: openai/llama3, api_base: 'http://h/v1', input_cost_per_token: 0, output_cost_per_token: 0 }
  - model_name: d
    litellm_params: { model: openai/llama3, api_base: 'http://h/v1' }
    model_info: { input_cost_per_token: 0.000001, output_cost_per_token: 0.000002 }
`,
    );
    expect(config.warnings.filter((w) => w.includes("api_key is written"))).toHaveLength(2);
    expect(config.warnings.filter((w) => w.includes("no price"))).toEqual([]);
  });

  it("warns once per unpriced deployment, naming each", () => {
    const config = load(`model_list:
  - model_name: a
    litellm_params: { model: openai/llama3, api_base: 'http://h/v1' }
  - model_name: a
    litellm_params: { model: openai/qwen3, api_base: 'http://h2/v1', input_cost_per_token: 0.000001 }
`);
    expect(config.warnings).toEqual([
      expect.stringMatching(
        /^model_list\[0\] in .*: no price is known for openai\/llama3 \(model_name "a"\)/,
      ),
      expect.stringMatching(/^model_list\[1\] in .*: no price is known for openai\/qwen3 \(model_name "a"\)/),
    ]);
  });
});

describe("loadModelConfig: cache_control_injection_points (LiteLLM's shape)", () => {
  const entry = (points: string) => `model_list:
  - model_name: claude
    litellm_params:
      model: anthropic/claude-sonnet-4-5
      api_key: k
      cache_control_injection_points: ${points}
`;

  it("reads message points by role or index (a numeric string too)", () => {
    const config = load(
      entry(
        `[{location: message, role: system, control: {type: ephemeral, ttl: 1h}}, {location: message, index: "-1"}]`,
      ),
    );
    expect(config.deployments[0]?.cacheControlInjectionPoints).toEqual([
      { location: "message", role: "system", control: { type: "ephemeral", ttl: "1h" } },
      { location: "message", index: -1 },
    ]);
    expect(config.warnings.filter((w) => w.includes("cache_control"))).toEqual([]);
  });

  it.each([
    ["a point with neither role nor index", "[{location: message}]", /needs a role or an index/],
    ["another location", "[{location: tool_config}]", /location/],
    [
      "a ttl Anthropic does not offer",
      "[{location: message, index: 0, control: {type: ephemeral, ttl: 2h}}]",
      /ttl/,
    ],
  ])("refuses %s at start-up, naming the key", (_name, points, reason) => {
    const { error } = fail(entry(points));
    expect(error.message).toMatch(/cache_control_injection_points/);
    expect(error.message).toMatch(reason);
  });
});
