/** The real Caddy (Debian package `caddy`) as a child process, run from a Caddyfile written for the test. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** A running Caddy. */
export interface TestCaddy {
  child: ChildProcess;
  /** Stops it (SIGTERM). */
  close(): void;
}

/**
 * Writes `caddyfile` into a fresh folder (also Caddy's HOME and XDG data/config folders, so nothing of the
 * user's is read or written) and runs `caddy run` on it; resolves once `readyUrl` answers 200.
 * The Caddyfile should say `admin off` so that parallel suites do not share the admin port 2019.
 * @throws Error when Caddy exits or `readyUrl` does not answer 200 within 15 s.
 */
export async function startCaddy(caddyfile: string, readyUrl: string): Promise<TestCaddy> {
  const dir = mkdtempSync(path.join(tmpdir(), "caddy-test-"));
  const file = path.join(dir, "Caddyfile");
  writeFileSync(file, caddyfile);
  const child = spawn("caddy", ["run", "--adapter", "caddyfile", "--config", file], {
    env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
    stdio: "ignore",
  });
  const close = () => {
    child.kill("SIGTERM");
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ok = await fetch(readyUrl).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { child, close };
    if (Date.now() > deadline || child.exitCode !== null) {
      close();
      throw new Error(`caddy did not start (exit code ${child.exitCode})`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
