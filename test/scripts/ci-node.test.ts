/**
 * scripts/ci-node.sh, which .ci/run uses to run CI on the images' Node: it installs the version the Dockerfiles
 * pin from npm's node-linux-<arch> package (real registry), reuses an install already in place without npm, and
 * fails with a clear message (changing nothing) when npm cannot install it.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../infra/files.js";

const SCRIPT = path.join(REPO_ROOT, "scripts/ci-node.sh");
const work = mkdtempSync(path.join(tmpdir(), "ci-node-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs the script with extra environment; npm is pointed at a closed port when `offline` is set. */
function ciNode(env: Record<string, string>, args: string[] = [], offline = false) {
  const registry = offline
    ? {
        npm_config_registry: "http://127.0.0.1:9/",
        npm_config_cache: path.join(work, "empty-npm-cache"),
        npm_config_fetch_retries: "0",
      }
    : {};
  return spawnSync("bash", [SCRIPT, ...args], {
    encoding: "utf8",
    env: { ...process.env, ...env, ...registry },
    timeout: 240_000,
  });
}

/** The x.y.z of a Dockerfile's `ARG NODE_IMAGE=node:x.y.z-…` line. */
function imageNode(dockerfile: string): string | undefined {
  const text = readFileSync(path.join(REPO_ROOT, dockerfile), "utf8");
  return /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-/m.exec(text)?.[1];
}

describe("scripts/ci-node.sh", () => {
  const version = ciNode({}, ["--version"]).stdout.trim();

  it.each(["services/gateway/Dockerfile", "services/console/Dockerfile", "scanner/Dockerfile"])(
    "installs the Node that %s runs",
    (dockerfile) => {
      expect(version).toMatch(/^\d+\.\d+\.\d+$/);
      expect(imageNode(dockerfile)).toBe(version);
    },
  );

  it("installs that Node from npm with its headers, then reuses it without calling npm", () => {
    const dir = path.join(work, "installed");
    const first = ciNode({ CI_NODE_DIR: dir });
    expect(first.stderr).toContain(`installing node-linux-`);
    expect(first.status).toBe(0);
    const root = first.stdout.trim();
    expect(root.startsWith(`${dir}/node_modules/node-linux-`)).toBe(true);
    const run = spawnSync(path.join(root, "bin/node"), ["-p", "process.versions.node"], { encoding: "utf8" });
    expect(run.stdout.trim()).toBe(version);
    expect(existsSync(path.join(root, "include/node/node.h"))).toBe(true);

    const again = ciNode({ CI_NODE_DIR: dir }, [], true);
    expect(again.stderr).toBe("");
    expect(again.status).toBe(0);
    expect(again.stdout.trim()).toBe(root);
  }, 300_000);

  it("says which package npm failed to install and leaves nothing behind", () => {
    const dir = path.join(work, "unreachable", "node");
    const r = ciNode({ CI_NODE_DIR: dir }, [], true);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(
      new RegExp(`ci-node: npm install node-linux-\\w+@${version.replaceAll(".", "\\.")} failed`),
    );
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(path.dirname(dir))).toEqual([]);
  }, 60_000);
});
