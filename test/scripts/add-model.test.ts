/**
 * scripts/add-model.sh / scripts/lib/add-model.ts: one entry per backend appended to litellm/config.yaml with
 * every comment kept, checked by the gateway's own loader before anything is written, idempotent.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REPO_ROOT } from "../../infra/files.js";
import { AddModelError, entryFor, LOCAL_RUNNER_API_BASE, withEntry } from "../../scripts/lib/add-model.js";
import { loadModelConfig } from "../../services/gateway/src/config/load-model-config.js";

const SHIPPED = readFileSync(path.join(REPO_ROOT, "litellm/config.yaml"), "utf8");

/** The comment lines of a YAML text, trimmed. */
const comments = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith("#"));

function tempConfig(text = SHIPPED): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "add-model-test-")), "config.yaml");
  writeFileSync(file, text);
  return file;
}

function addModel(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(
      "bash",
      [path.join(REPO_ROOT, "scripts/add-model.sh"), ...args],
      { timeout: 60_000 },
      (e, o, r) => done({ status: e ? Number(e.code ?? 1) : 0, stdout: o, stderr: r }),
    ),
  );
}

describe("entryFor", () => {
  it("builds each backend's litellm_params", () => {
    expect(entryFor({ backend: "local-runner", model: "ai/smollm2" }, [])).toEqual({
      model_name: "ai/smollm2",
      litellm_params: { model: "openai/ai/smollm2", api_base: LOCAL_RUNNER_API_BASE },
    });
    expect(
      entryFor({ backend: "cloud", model: "claude-sonnet-4-5", provider: "anthropic", alias: "c" }, []),
    ).toEqual({
      model_name: "c",
      litellm_params: { model: "anthropic/claude-sonnet-4-5", api_key: "os.environ/ANTHROPIC_API_KEY" },
    });
    expect(
      entryFor(
        { backend: "remote", model: "m", apiBase: "http://10.0.0.5:8000/v1", apiKeyEnv: "VLLM_KEY" },
        [],
      ),
    ).toEqual({
      model_name: "m",
      litellm_params: {
        model: "openai/m",
        api_base: "http://10.0.0.5:8000/v1",
        api_key: "os.environ/VLLM_KEY",
      },
    });
  });

  it("clones a registered model tagged npu for mock-npu, and refuses when there is none", () => {
    const existing = [
      { model_name: "a", litellm_params: { model: "openai/a", api_base: "http://h/v1" } },
      { model_name: "b", litellm_params: { model: "openai/b", api_base: "http://h/v1" } },
    ];
    expect(entryFor({ backend: "mock-npu", model: "b" }, existing)).toEqual({
      model_name: "b-npu",
      litellm_params: { model: "openai/b", api_base: "http://h/v1" },
      model_info: { id: "b-npu", tags: ["npu"] },
    });
    expect(entryFor({ backend: "mock-npu" }, existing).model_name).toBe("a-npu");
    expect(() => entryFor({ backend: "mock-npu" }, [])).toThrow(/registers none yet/);
    expect(() => entryFor({ backend: "mock-npu", model: "zz" }, existing)).toThrow(/registered: a, b/);
    expect(() => entryFor({ backend: "remote", model: "m" }, [])).toThrow(AddModelError);
    expect(() => entryFor({ backend: "cloud" }, [])).toThrow(/needs --model/);
  });
});

describe("withEntry", () => {
  it("keeps every comment of the shipped config (its examples too) and the gateway loads the result", () => {
    const entry = entryFor({ backend: "remote", model: "m", apiBase: "http://10.0.0.5:8000/v1" }, []);
    const next = withEntry(SHIPPED, entry) ?? "";
    expect(comments(next)).toEqual(comments(SHIPPED));
    expect(parse(next).model_list).toEqual([entry]);
    const loaded = loadModelConfig(tempConfig(next), {});
    expect(loaded.deployments.map((d) => [d.modelName, d.upstreamModel, d.apiBase])).toEqual([
      ["m", "m", "http://10.0.0.5:8000/v1"],
    ]);
    expect(withEntry(next, entry)).toBeUndefined();
    const twice = withEntry(next, { ...entry, model_name: "m2" }) ?? "";
    expect(parse(twice).model_list.map((e: { model_name: string }) => e.model_name)).toEqual(["m", "m2"]);
    expect(comments(twice)).toEqual(comments(SHIPPED));
  });
});

describe("scripts/add-model.sh", { timeout: 60_000 }, () => {
  it("registers, is idempotent, clones for mock-npu, and never writes a config the gateway refuses", async () => {
    const file = tempConfig();
    const env = path.join(path.dirname(file), ".env");
    writeFileSync(env, "OPENAI_API_KEY=\n");
    const args = ["--config", file, "--env-file", env];
    const remote = [...args, "--backend", "remote", "--model", "m", "--api-base", "http://h:1/v1"];
    const first = await addModel(remote);
    expect(first.stdout).toContain("registered m (openai/m)");
    expect(first.status).toBe(0);
    const written = readFileSync(file, "utf8");
    const again = await addModel(remote);
    expect(again.stdout).toContain("m is already registered");
    expect(readFileSync(file, "utf8")).toBe(written);
    expect((await addModel([...args, "--backend", "mock-npu"])).status).toBe(0);
    expect(parse(readFileSync(file, "utf8")).model_list[1].model_info).toEqual({
      id: "m-npu",
      tags: ["npu"],
    });

    const before = readFileSync(file, "utf8");
    const refused = await addModel([...args, "--backend", "cloud", "--model", "gpt-4o-mini"]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("not written, the gateway would refuse it");
    expect(refused.stderr).toContain(`Set OPENAI_API_KEY in .env`);
    expect(refused.stderr).toContain(file);
    expect(readFileSync(file, "utf8")).toBe(before);
    const bad = await addModel([...args, "--backend", "nope"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--backend must be one of local-runner, cloud, remote, mock-npu");
  });

  it("lists its options with --help", async () => {
    const help = await addModel(["--help"]);
    for (const flag of [
      "--backend",
      "--model",
      "--alias",
      "--api-base",
      "--api-key-env",
      "--provider",
      "--dry-run",
    ])
      expect(help.stdout).toContain(flag);
  });
});
