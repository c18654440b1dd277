/**
 * Every operator script is shellcheck clean (with .shellcheckrc) and answers --help with its usage.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../infra/files.js";

const scripts = readdirSync(path.join(REPO_ROOT, "scripts"))
  .filter((f) => f.endsWith(".sh"))
  .map((f) => `scripts/${f}`);
const helpers = readdirSync(path.join(REPO_ROOT, "scripts/lib"))
  .filter((f) => f.endsWith(".sh"))
  .map((f) => `scripts/lib/${f}`);
const hasShellcheck = spawnSync("shellcheck", ["--version"]).status === 0;

describe("scripts", () => {
  it("are shellcheck clean", (ctx) => {
    if (!hasShellcheck) return ctx.skip("shellcheck is not installed (npm run test:deps installs it)");
    const r = spawnSync("shellcheck", [...scripts, ...helpers, ".ci/run"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    });
    expect(r.stdout).toBe("");
    expect(r.status).toBe(0);
  });

  it.each(scripts)("%s --help prints its usage", (script) => {
    const out = execFileSync("bash", [script, "--help"], { cwd: REPO_ROOT, encoding: "utf8" });
    expect(out).toMatch(new RegExp(`^Usage: ${script.replace(".", "\\.")}`));
  });

  it.each(scripts)("%s runs with set -euo pipefail", (script) => {
    const text = readFileSync(path.join(REPO_ROOT, script), "utf8");
    expect(text.startsWith("#!/usr/bin/env bash\n")).toBe(true);
    expect(text).toMatch(/^set -euo pipefail$/m);
  });
});
