/**
 * LiteLLM's response cache switches in the config (`litellm_settings.cache`, `cache_params`): defaults, every key
 * read, LiteLLM's sync call type names, and a clear problem for each value the gateway cannot use.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadModelConfig } from "../../../../services/gateway/src/config/load-model-config.js";

const dir = mkdtempSync(join(tmpdir(), "cache-params-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;

const modelList = [
  "model_list:",
  "  - model_name: embed",
  "    litellm_params: { model: openai/text-embedding-3-small, api_key: sk-test }",
  "    model_info: { mode: embedding }",
  "  - model_name: general",
  "    litellm_params: { model: openai/gpt-4o-mini, api_key: sk-test }",
  "",
].join("\n");

function load(settings: string) {
  const path = join(dir, `config-${++counter}.yaml`);
  writeFileSync(path, `${modelList}litellm_settings:\n${settings}`);
  return loadModelConfig(path, {});
}

function problems(settings: string): string {
  try {
    load(settings);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error("expected a ConfigError");
}

describe("litellm_settings.cache", () => {
  it("is off unless cache is true, and says cache_params alone does nothing", () => {
    expect(load("  num_retries: 1\n").responseCache).toBeUndefined();
    const alone = load("  cache_params:\n    ttl: 60\n");
    expect(alone.responseCache).toBeUndefined();
    expect(alone.warnings.join("\n")).toContain(
      "cache_params is ignored while litellm_settings.cache is not true",
    );
  });

  it("defaults to Redis, 600 s, every cacheable call type, default_on, per tenant", () => {
    expect(load("  cache: true\n").responseCache).toEqual({
      type: "redis",
      ttlSeconds: 600,
      namespace: "",
      supportedCallTypes: [
        "acompletion",
        "atext_completion",
        "aembedding",
        "aresponses",
        "anthropic_messages",
      ],
      mode: "default_on",
      scope: "tenant",
      maxEntryBytes: 1024 * 1024,
      maxEntries: 10_000,
    });
  });

  it("reads every cache_params key, mapping LiteLLM's sync call type names", () => {
    const config = load(
      [
        "  cache: true",
        "  cache_params:",
        "    type: local",
        "    ttl: 30",
        "    namespace: prod.v1",
        "    supported_call_types: [completion, acompletion, embedding]",
        "    mode: default_off",
        "    scope: global",
        "    max_entry_bytes: 2048",
        "    max_entries: 50",
        "    host: redis.internal",
        "",
      ].join("\n"),
    );
    expect(config.responseCache).toEqual({
      type: "local",
      ttlSeconds: 30,
      namespace: "prod.v1",
      supportedCallTypes: ["acompletion", "aembedding"],
      mode: "default_off",
      scope: "global",
      maxEntryBytes: 2048,
      maxEntries: 50,
    });
    expect(config.warnings.join("\n")).toContain(
      "host is ignored by this gateway (the cache uses the gateway's REDIS_URL)",
    );
  });

  it.each([
    ["    type: redis-semantic\n", "litellm_settings.cache_params.type"],
    ["    ttl: -5\n", "litellm_settings.cache_params.ttl"],
    ["    mode: sometimes\n", "litellm_settings.cache_params.mode"],
    ["    supported_call_types: [transcription]\n", "litellm_settings.cache_params.supported_call_types[0]"],
    ["    namespace: 'has spaces'\n", "litellm_settings.cache_params.namespace"],
    [
      "    similarity_threshold: 0.9\n",
      "is read only with type: postgres-semantic at litellm_settings.cache_params.similarity_threshold",
    ],
    ["    tll: 60\n", 'unknown key(s) "tll" (did you mean "ttl"?)'],
  ])("refuses %j naming %s", (params, named) => {
    expect(problems(`  cache: true\n  cache_params:\n${params}`)).toContain(named);
  });

  it("refuses a cache that is not true or false, and cache_params that is not a mapping", () => {
    expect(problems("  cache: yes please\n")).toContain("litellm_settings.cache");
    expect(problems("  cache: true\n  cache_params: [redis]\n")).toContain(
      "expected a mapping (type, ttl, namespace, …), got a list at litellm_settings.cache_params",
    );
  });

  describe("type: postgres-semantic", () => {
    const semantic = "  cache: true\n  cache_params:\n    type: postgres-semantic\n";

    it("reads similarity_threshold (default 0.95) and the embedding model", () => {
      expect(load(`${semantic}    semantic_cache_embedding_model: embed\n`).responseCache?.semantic).toEqual({
        similarityThreshold: 0.95,
        embeddingModel: "embed",
      });
      const litellmName = `${semantic}    similarity_threshold: 0.8\n    redis_semantic_cache_embedding_model: embed\n`;
      expect(load(litellmName).responseCache?.semantic).toEqual({
        similarityThreshold: 0.8,
        embeddingModel: "embed",
      });
    });

    it.each([
      ["", "type postgres-semantic needs semantic_cache_embedding_model"],
      ["    semantic_cache_embedding_model: nowhere\n", '"nowhere" is not a model_name of the model list'],
      ["    semantic_cache_embedding_model: general\n", '"general" is not an embedding model'],
      [
        "    semantic_cache_embedding_model: embed\n    similarity_threshold: 1.5\n",
        "litellm_settings.cache_params.similarity_threshold",
      ],
    ])("refuses %j: %s", (params, named) => {
      expect(problems(`${semantic}${params}`)).toContain(named);
    });
  });
});
