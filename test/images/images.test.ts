/**
 * Builds every image of the stack with a real Docker engine and starts it (`npm run test:images`; not part of
 * `npm test`). For each row of ./images.ts: the Dockerfile's base images are provided (pulled, or stood in
 * for when no registry answers), the image is built with the build context and Dockerfile the Pulumi program
 * declares, a container is started, and it must run as non-root, pass the health check the Pulumi program
 * declares for that service, and pass the row's smoke check.
 *
 * Needs root (it starts a private dockerd and may apt-get install docker.io and debootstrap).
 * IMAGES_CACHE_DIR keeps the stand-in rootfs (default ~/.cache/ai-platform-images).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parse as parseDotenv } from "dotenv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../infra/files.js";
import { installMocks, runPlatform, stackSettings } from "../infra/harness.js";
import { buildDeclaredImage } from "./build-image.js";
import { DockerEngine, ensureDebianPackages, sharedEngineDir, stopLeftoverDaemon } from "./engine.js";
import { IMAGES, type RunningContainer } from "./images.js";

/** What the Pulumi program declares for one locally built image and its container. */
interface Declared {
  imageName: string;
  context: string;
  dockerfile: string;
  healthcheck: string[];
}

/** The engine's folder, shared with the stack rehearsal (its image store and build cache). */
const ENGINE_DIR = sharedEngineDir();

let engine: DockerEngine;
const declared = new Map<string, Declared>();

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error("the image suite needs root (dockerd, apt-get)");
  ensureDebianPackages({ dockerd: "docker.io", docker: "docker.io", debootstrap: "debootstrap" });

  await installMocks("local");
  const { parseConfig } = await import("../../infra/config.js");
  const env = parseDotenv(readFileSync(`${REPO_ROOT}.env.example`, "utf8"));
  const run = await runPlatform(parseConfig(await stackSettings("local"), env));
  for (const reg of run.registered.filter((r) => r.type === "docker:index/image:Image")) {
    const imageName = String(reg.inputs.imageName);
    const name = /^platform\/([a-z-]+):/.exec(imageName)?.[1] ?? imageName;
    const build = reg.inputs.build as { context: string; dockerfile: string };
    const container = run.containers.get(name);
    if (!container?.healthcheck) throw new Error(`the program declares no health-checked container ${name}`);
    declared.set(name, {
      imageName,
      context: path.resolve(build.context),
      dockerfile: path.resolve(build.dockerfile),
      healthcheck: container.healthcheck.tests,
    });
  }

  await stopLeftoverDaemon(ENGINE_DIR);
  engine = await DockerEngine.start(ENGINE_DIR);
  process.stdout.write(`images: dockerd pid ${engine.pid} on ${engine.host}\n`);
});

afterAll(async () => {
  await engine?.stop();
});

describe("the program declares every image of the table", () => {
  it("has a row for each locally built image and nothing else", () => {
    expect([...declared.keys()].sort()).toEqual(IMAGES.map((r) => r.name).sort());
    for (const row of IMAGES)
      expect(declared.get(row.name)?.dockerfile).toBe(path.join(REPO_ROOT, row.dockerfile));
  });
});

describe.each(IMAGES)("image $name", (row) => {
  it("builds, starts as non-root, passes its declared health check and its smoke check", async (ctx) => {
    const reason = row.skip?.();
    if (reason) return ctx.skip(reason);
    const d = declared.get(row.name);
    if (!d) throw new Error(`the program declares no image ${row.name}`);

    const build = await buildDeclaredImage(engine, d);
    expect(build.status, `docker build of ${d.imageName} failed:\n${build.tail}`).toBe(0);

    const run = engine.docker([
      "run",
      "--detach",
      "--network",
      "none",
      ...Object.entries(row.env).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
      ...Object.entries(row.mounts ?? {}).flatMap(([host, inside]) => ["--volume", `${host}:${inside}:ro`]),
      d.imageName,
    ]);
    expect(run.status, `docker run ${d.imageName}: ${run.stderr}`).toBe(0);
    const id = run.stdout.trim();
    const container: RunningContainer = {
      engine,
      id,
      node(script) {
        const r = engine.docker(["exec", id, "node", "-e", script], { timeoutMs: 30_000 });
        if (r.status !== 0) throw new Error(`node -e in ${row.name} failed (${r.status}): ${r.stderr}`);
        return r.stdout;
      },
    };
    const logs = () => {
      const r = engine.docker(["logs", "--tail", "40", id]);
      return `${r.stdout}${r.stderr}`;
    };
    try {
      // The declared health check, run inside the container the way Docker runs it.
      const [form, ...rest] = d.healthcheck;
      const probe = form === "CMD-SHELL" ? ["sh", "-c", rest.join(" ")] : rest;
      const deadline = Date.now() + row.startTimeoutMs;
      let last = "";
      for (;;) {
        const state = engine.docker(["inspect", "--format", "{{.State.Status}}", id]).stdout.trim();
        if (state !== "running") throw new Error(`${row.name} is ${state}; its log:\n${logs()}`);
        if (row.healthUnreachable === undefined) {
          const r = engine.docker(["exec", id, ...probe], { timeoutMs: 30_000 });
          if (r.status === 0) break;
          last = `exit ${r.status} ${r.stderr}`.trim();
        } else {
          try {
            row.smoke(container);
            break;
          } catch (error) {
            last = String(error);
          }
        }
        if (Date.now() > deadline)
          throw new Error(
            `${row.healthUnreachable === undefined ? `health check ${JSON.stringify(d.healthcheck)}` : "smoke check"} still failing after ${row.startTimeoutMs} ms (${last}); log:\n${logs()}`,
          );
        await sleep(1000);
      }
      if (row.healthUnreachable !== undefined) {
        const r = engine.docker(["exec", id, ...probe], { timeoutMs: 30_000 });
        expect(r.status, `the health check fails here: ${row.healthUnreachable}`).not.toBe(0);
      }

      const user = engine.docker(["inspect", "--format", "{{.Config.User}}", id]).stdout.trim();
      expect(user, "the image names a USER").not.toMatch(/^(|root|0)(:.*)?$/);
      const uid = container.node(
        "process.stdout.write(/^Uid:\\s+(\\d+)/m.exec(require('fs').readFileSync('/proc/1/status','utf8'))[1])",
      );
      expect(Number(uid), "uid of the container's main process").toBeGreaterThan(0);

      row.smoke(container);
    } finally {
      engine.docker(["rm", "--force", id]);
    }
  });
});
