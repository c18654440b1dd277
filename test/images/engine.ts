/**
 * A private Docker engine for the image tests: installs Debian's docker.io and debootstrap when absent, starts
 * `dockerd` on its own socket, data root and exec root (never the machine's default daemon), and stops it by
 * the pid it was started with.
 *
 * Needs root (dockerd, apt-get). Every docker CLI call goes through {@link DockerEngine.docker}, which sets
 * DOCKER_HOST to the private socket and DOCKER_BUILDKIT=0 (the classic builder runs every RUN step for real;
 * BuildKit would try to pull its `docker/dockerfile:1` frontend from a registry).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { REPO_ROOT } from "../../infra/files.js";

/**
 * The private engine's folder the image suite and the stack rehearsal share (one after the other, never at
 * once), so the images one builds (ours, the debootstrap base) are in the other's image store and build cache:
 * PLATFORM_ENGINE_DIR, else /var/tmp/ai-platform-engine-<checkout hash>. Short (a unix socket path has a
 * 108-byte limit), one per checkout, outside /tmp so it survives a reboot.
 */
export function sharedEngineDir(): string {
  return (
    process.env.PLATFORM_ENGINE_DIR ??
    `/var/tmp/ai-platform-engine-${createHash("sha256").update(REPO_ROOT).digest("hex").slice(0, 8)}`
  );
}

/** Result of one docker CLI call. */
export interface DockerResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Whether `program` is on PATH. */
export function onPath(program: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Installs the Debian packages whose program is missing: `{program: package}`, e.g. `{dockerd: "docker.io"}`.
 * @throws Error with apt-get's output when the install fails.
 */
export function ensureDebianPackages(programs: Record<string, string>): void {
  const missing = [
    ...new Set(
      Object.entries(programs)
        .filter(([program]) => !onPath(program))
        .map(([, pkg]) => pkg),
    ),
  ];
  if (missing.length === 0) return;
  process.stdout.write(`images: installing ${missing.join(", ")} (apt-get)\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update", "-qq"], { env, stdio: "inherit" });
  execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...missing], {
    env,
    stdio: "inherit",
  });
}

/** A running private daemon. */
export class DockerEngine {
  /** `unix://…` address of the private socket. */
  readonly host: string;

  private constructor(
    /** Folder holding the socket, pid file, data root, exec root and the daemon's log. */
    readonly dir: string,
    private readonly daemon: ChildProcess,
  ) {
    this.host = `unix://${path.join(dir, "docker.sock")}`;
  }

  /**
   * Starts `dockerd` under `dir` and waits (up to `timeoutMs`, default 60 s) until it answers `docker version`.
   * Its default bridge and iptables handling are off: builds use `--network host`; containers run with
   * `--network none` or on a user-defined bridge network (published ports go through docker-proxy).
   * `nofile` raises the daemon's open-files limit (soft and hard), which bounds the nofile ulimit a container
   * may be given (runc refuses a hard limit above its own).
   * @throws Error with the tail of the daemon's log when it exits or does not answer in time.
   */
  static async start(
    dir: string,
    timeoutMs = 60_000,
    options: { nofile?: number } = {},
  ): Promise<DockerEngine> {
    mkdirSync(dir, { recursive: true });
    const logFile = path.join(dir, "dockerd.log");
    const log = openSync(logFile, "a");
    const [program, ...prefix] =
      options.nofile === undefined
        ? ["dockerd"]
        : ["prlimit", `--nofile=${options.nofile}:${options.nofile}`, "dockerd"];
    const daemon = spawn(
      program ?? "dockerd",
      [
        ...prefix,
        "--host",
        `unix://${path.join(dir, "docker.sock")}`,
        "--data-root",
        path.join(dir, "data"),
        "--exec-root",
        path.join(dir, "exec"),
        "--pidfile",
        path.join(dir, "docker.pid"),
        "--bridge",
        "none",
        "--iptables=false",
        "--ip-forward=false",
      ],
      { stdio: ["ignore", log, log], detached: true },
    );
    closeSync(log);
    const engine = new DockerEngine(dir, daemon);
    let exited: number | null = null;
    daemon.once("exit", (code) => {
      exited = code ?? -1;
    });
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (exited !== null) break;
      if (engine.docker(["version", "--format", "{{.Server.Version}}"]).status === 0) return engine;
      await sleep(500);
    }
    await engine.stop();
    const tail = readFileSync(logFile, "utf8").split("\n").slice(-20).join("\n");
    throw new Error(
      `dockerd ${exited === null ? `did not answer within ${timeoutMs} ms` : `exited with ${exited}`}; ${logFile}:\n${tail}`,
    );
  }

  /** The daemon's process id. */
  get pid(): number | undefined {
    return this.daemon.pid;
  }

  /** Runs the docker CLI against this daemon; never throws (look at `status`). */
  docker(args: string[], options: { input?: string; timeoutMs?: number } = {}): DockerResult {
    const r = spawnSync("docker", args, {
      env: { ...process.env, DOCKER_HOST: this.host, DOCKER_BUILDKIT: "0" },
      input: options.input,
      timeout: options.timeoutMs ?? 120_000,
      maxBuffer: 64 * 1024 * 1024,
      encoding: "utf8",
    });
    const timedOut = r.error ? ` (${r.error.message})` : "";
    return { status: r.status ?? 1, stdout: r.stdout ?? "", stderr: `${r.stderr ?? ""}${timedOut}` };
  }

  /**
   * Runs the docker CLI streaming its output to this process's stdout (builds show their progress).
   * @returns the exit status and the last 4 KB of combined output.
   */
  dockerStreamed(args: string[], timeoutMs: number): Promise<{ status: number; tail: string }> {
    return new Promise((done) => {
      const child = spawn("docker", args, {
        env: { ...process.env, DOCKER_HOST: this.host, DOCKER_BUILDKIT: "0" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let tail = "";
      const keep = (chunk: Buffer) => {
        process.stdout.write(chunk);
        tail = (tail + chunk.toString("utf8")).slice(-4096);
      };
      child.stdout.on("data", keep);
      child.stderr.on("data", keep);
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      child.once("close", (code) => {
        clearTimeout(timer);
        done({ status: code ?? 1, tail });
      });
    });
  }

  /** Whether the daemon has an image `ref` (name:tag). */
  hasImage(ref: string): boolean {
    return this.docker(["image", "inspect", ref]).status === 0;
  }

  /**
   * Stops the daemon by its pid (SIGTERM, then SIGKILL after 20 s) and waits for it to exit.
   * Containers it runs stop with it.
   */
  async stop(): Promise<void> {
    const pid = this.daemon.pid;
    if (pid === undefined || this.daemon.exitCode !== null || this.daemon.signalCode !== null) return;
    const gone = new Promise<void>((done) => this.daemon.once("exit", () => done()));
    process.kill(pid, "SIGTERM");
    const killed = await Promise.race([gone.then(() => true), sleep(20_000).then(() => false)]);
    if (!killed) {
      process.kill(pid, "SIGKILL");
      await gone;
    }
  }
}

/** Whether the pid file under `dir` names a live process (a daemon left by an interrupted run). */
export function leftoverDaemon(dir: string): number | undefined {
  const pidFile = path.join(dir, "docker.pid");
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** Stops (SIGTERM, up to 20 s) a daemon an interrupted run left under `dir`, if there is one. */
export async function stopLeftoverDaemon(dir: string): Promise<void> {
  const stale = leftoverDaemon(dir);
  if (stale === undefined) return;
  process.stdout.write(`stopping the daemon an interrupted run left (pid ${stale})\n`);
  process.kill(stale, "SIGTERM");
  for (let i = 0; i < 40 && leftoverDaemon(dir) !== undefined; i++) await sleep(500);
}
