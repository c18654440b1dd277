/**
 * The benchmark's servers, each in its own child process. TypeScript entries run as `node --import tsx <file>`
 * (what the `tsx` CLI does, minus its wrapper process), so the child's pid is the server's own: its RSS is read
 * from /proc/<pid>/status and `--cpu-prof` lands in the right process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { descendants } from "./cpu.js";

/** Repository root (bench/lib/ → ../../). */
export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** A running child server. */
export interface Service {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Last lines of stderr and stdout, for the message when it dies. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  /** Entry file, relative to `cwd` (or absolute). */
  entry: string;
  env: NodeJS.ProcessEnv;
  /** Working directory (default: this repository's root). */
  cwd?: string;
  /** Extra node flags (e.g. `--cpu-prof`). */
  nodeFlags?: string[];
  /** Arguments after the entry (the program's own flags). */
  args?: string[];
  /** The node binary (default: the one running the benchmark, `process.execPath`). */
  node?: string;
}

/** Starts `node <entry>` in `cwd` (default the repository root), with `--import tsx` for a TypeScript entry. */
export function spawnService(
  name: string,
  { entry, env, cwd = repoRoot, nodeFlags = [], args = [], node = process.execPath }: SpawnOptions,
): Service {
  // From source, workspace packages resolve to their TypeScript (`development` export condition), not a build.
  const loader = entry.endsWith(".ts") ? ["--conditions=development", "--import", "tsx"] : [];
  const child = spawn(node, [...nodeFlags, ...loader, entry, ...args], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error(`${name}: could not start ${entry}`);
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    tail.push(chunk.toString("utf8"));
    if (tail.length > 40) tail.shift();
  };
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    name,
    child,
    pid: child.pid,
    output: () => tail.join("").trim(),
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const killed = sleep(graceMs).then(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      });
      await Promise.race([exited, killed]);
      await exited;
    },
  };
}

/** Resolves with the first stdout line that parses as JSON with `ready: true`; rejects if the child exits first. */
export function readyLine<T extends { ready: true }>(service: Service, timeoutMs = 30_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stdout = service.child.stdout;
    if (stdout === null) return reject(new Error(`${service.name}: no stdout`));
    const lines = createInterface({ input: stdout });
    const timer = setTimeout(() => fail(`did not report ready within ${timeoutMs} ms`), timeoutMs);
    const onExit = (code: number | null) => fail(`exited with ${code} before it was ready`);
    function fail(why: string) {
      clearTimeout(timer);
      lines.close();
      reject(new Error(`${service.name} ${why}:\n${service.output()}`));
    }
    service.child.once("exit", onExit);
    lines.on("line", (line) => {
      try {
        const parsed = JSON.parse(line) as T;
        if (parsed.ready !== true) return;
        clearTimeout(timer);
        service.child.off("exit", onExit);
        resolve(parsed);
      } catch {
        // not our line (a log line)
      }
    });
    // Keep draining stdout afterwards so a chatty child never blocks on a full pipe.
    stdout.on("data", () => {});
  });
}

/** Polls `url` until it answers 200; rejects if the child exits or `timeoutMs` passes. */
export async function waitForHttp(service: Service, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  service.child.stdout?.on("data", () => {});
  while (Date.now() < deadline) {
    if (service.child.exitCode !== null) {
      throw new Error(`${service.name} exited with ${service.child.exitCode}:\n${service.output()}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${service.name} did not answer ${url} within ${timeoutMs} ms:\n${service.output()}`);
}

/** Throws, with the end of its stderr, when the service's process has exited. */
export function assertAlive(service: Service): void {
  const { exitCode, signalCode } = service.child;
  if (exitCode !== null || signalCode !== null) {
    throw new Error(
      `${service.name} exited (${signalCode ?? `status ${exitCode}`}) during the run:\n${service.output()}`,
    );
  }
}

/** Resident set size of a process in KiB (`VmRSS` of /proc/<pid>/status), and its peak (`VmHWM`). */
export function memoryKiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rss: field("VmRSS"), peak: field("VmHWM") };
}

/**
 * {@link memoryKiB} summed over `pid` and its descendants (a gateway with GATEWAY_WORKERS runs its workers as
 * child processes); a descendant that exits between listing and reading is left out.
 */
export function treeMemoryKiB(pid: number): { rss: number; peak: number } {
  const total = memoryKiB(pid);
  for (const child of descendants(pid)) {
    try {
      const m = memoryKiB(child);
      total.rss += m.rss;
      total.peak += m.peak;
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

/** A TCP port that was free a moment ago (for servers that take their port from the environment). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a gateway (`entry`, default from source, relative to `cwd`, default this repository) on a free port of
 * 127.0.0.1 with `env` on top of this process's environment (its PORT and HOST are replaced), and resolves once
 * `/health/liveliness` answers; if it does not, the child is stopped and the error (with its stderr) is thrown.
 * @returns the service and its origin, e.g. `http://127.0.0.1:41234`.
 */
export async function spawnGateway(
  name: string,
  env: NodeJS.ProcessEnv,
  options: { entry?: string; cwd?: string; nodeFlags?: string[]; node?: string } = {},
): Promise<{ service: Service; origin: string }> {
  const port = await freePort();
  const service = spawnService(name, {
    entry: options.entry ?? "services/gateway/src/server.ts",
    env: { GATEWAY_ENV_FILE: "", ...process.env, ...env, PORT: String(port), HOST: "127.0.0.1" },
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.nodeFlags === undefined ? {} : { nodeFlags: options.nodeFlags }),
    ...(options.node === undefined ? {} : { node: options.node }),
  });
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(service, `${origin}/health/liveliness`);
  } catch (error) {
    await service.stop(1000);
    throw error;
  }
  return { service, origin };
}
