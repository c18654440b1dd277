/**
 * The e2e runner's command line (the run itself is `npm run e2e`, a CI step of its own: it starts the whole
 * platform, too slow for the default suite).
 */
import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../infra/files.js";

function runner(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(
      process.execPath,
      ["--import", "tsx", "test/e2e/run.ts", ...args],
      { cwd: REPO_ROOT, timeout: 30_000 },
      (error, stdout, stderr) => done({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

describe("npm run e2e", () => {
  it("lists its flags with --help and starts nothing", async () => {
    const help = await runner(["--help"]);
    for (const flag of ["--keep", "--wait", "--help"]) expect(help.stdout).toContain(flag);
    expect(help.stderr).not.toContain("starting");
    expect(help.status).toBe(0);
  });

  it("refuses an unknown flag and a --wait that is not whole seconds with status 2", async () => {
    const unknown = await runner(["--bogus"]);
    expect(unknown.stderr).toContain("e2e: Unknown option '--bogus' (see --help)");
    expect(unknown.status).toBe(2);
    const wait = await runner(["--wait", "soon"]);
    expect(wait.stderr).toContain("e2e: --wait takes whole seconds, got soon");
    expect(wait.status).toBe(2);
  });
});
