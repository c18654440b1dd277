/**
 * The stack rehearsal (`npm run test:stack`; not part of `npm test`): runs the Pulumi program for the `local`
 * stack under mocks, creates exactly the networks, volumes and containers it declares (./declared.ts,
 * ./create.ts) on a private Docker engine, and checks the running stack: every declared health check turns
 * healthy by Docker's own status, Prometheus has every scrape target up, no database publishes a host port, and
 * the services this repository builds run as non-root; then, with a model the operator adds (./operator.ts), the
 * smoke test passes (./checks/smoke.ts), a virtual key calls a tool of the operator's MCP server through the
 * gateway's `/mcp` and the call is in the spend log (./checks/mcp-tool-call.ts), a restart of relational-db under traffic loses no spend row
 * (./checks/db-restart.ts), `scripts/platform.sh backup` then `restore` round-trip the keys and spend
 * (./checks/backup.ts; its Mongo half runs against the document-db stand-in), and a second creation on the same
 * volumes keeps the keys (./checks/second-run.ts).
 *
 * Images: gateway, console and scanner are built from their Dockerfiles as the program declares them (the
 * image suite's builder), from the operator's checkout (this one plus the model registered by add-model.sh); every third-party image is a stand-in tagged with the pinned reference
 * (./stand-ins/images.ts says which are Debian's real programs, which contract fakes, which answer health checks
 * only). The harness adds nothing to the declared inputs, so a wrong hostname, env name, port, volume path or
 * health-check command in infra/ makes a check fail. One seed: the hub is unreachable here, so the scanner's
 * model volume is pre-loaded (as an operator of an offline host would) with the committed tiny model under the
 * default model's folder.
 *
 * Needs root (dockerd, apt-get) and the published host ports free (4000, 3000, 3001, 3030, 3080, 9090, 9093).
 * The engine's data root (images, build cache) is kept between runs and shared with the image suite
 * (../images/engine.ts sharedEngineDir: PLATFORM_ENGINE_DIR, default /var/tmp/ai-platform-engine-<checkout
 * hash>); containers, networks and volumes are created afresh each run.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../infra/files.js";
import { DEFAULT_MODEL } from "../../scanner/src/config/env.js";
import { buildDeclaredImage } from "../images/build-image.js";
import { DockerEngine, ensureDebianPackages, sharedEngineDir, stopLeftoverDaemon } from "../images/engine.js";
import { backupRoundTrip } from "./checks/backup.js";
import { restartUnderTraffic } from "./checks/db-restart.js";
import { toolCallThroughGateway } from "./checks/mcp-tool-call.js";
import { secondRunKeepsKeys } from "./checks/second-run.js";
import { runSmokeTest } from "./checks/smoke.js";
import { createStack, healthOf, type Seeds, waitHealthy } from "./create.js";
import { declaredLocalStack, type StackDescription } from "./declared.js";
import {
  inCheckout,
  OPERATOR_MCP_SERVER,
  OPERATOR_MODEL,
  operatorCheckout,
  operatorEnv,
  removeOperatorServers,
  startOperatorServers,
} from "./operator.js";
import { buildStandIns } from "./stand-ins/images.js";

/** The engine's folder, shared with the image suite: the images it built are reused here. */
const ENGINE_DIR = sharedEngineDir();
/** The containers holding data: none may publish a port on the host. */
const DATASTORES = ["relational-db", "document-db", "cache", "analytics-db", "object-store"];
/** The containers of the images this repository builds. */
const OWN_SERVICES = ["gateway", "console", "scanner"];
const TINY_MODEL = path.join(REPO_ROOT, "scanner/tiny-model/local/tiny-prompt-injection");

let engine: DockerEngine;
let docker: Docker;
let stack: StackDescription;
const timings: Record<string, number> = {};

/** What the checks of ./checks/ reach the running stack with. */
function access() {
  return { engine, docker, stack, log };
}

function log(line: string): void {
  process.stdout.write(`stack: ${line}\n`);
}

async function timed<T>(step: string, run: () => Promise<T>): Promise<T> {
  const start = Date.now();
  try {
    return await run();
  } finally {
    timings[step] = Math.round((Date.now() - start) / 1000);
    log(`${step}: ${timings[step]} s`);
  }
}

/** When this machine cannot give the daemon a hard open-files limit as high as a declared ulimit: that limit. */
let nofileCap: number | undefined;

/** This process's hard open-files limit (/proc/self/limits). */
function hardNofile(): number {
  const line = /^Max open files\s+\S+\s+(\S+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
  return line?.[1] === "unlimited" ? Number.MAX_SAFE_INTEGER : Number(line?.[1] ?? 0);
}

/** Every file under `dir`, relative. */
function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(path.join(dir, prefix)).flatMap((entry) => {
    const rel = path.join(prefix, entry);
    return statSync(path.join(dir, rel)).isDirectory() ? filesUnder(dir, rel) : [rel];
  });
}

/** The scanner's model volume pre-loaded with the tiny model under the default model's folder (uid 1000: node). */
function scannerSeed(): Seeds {
  const scanner = stack.containers.find((c) => c.name === "scanner");
  const env = Object.fromEntries(
    (scanner?.env ?? []).map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]),
  );
  const modelDir = env.SCANNER_MODEL_DIR;
  if (!scanner || !modelDir) return {};
  return {
    scanner: filesUnder(TINY_MODEL).map((file) => ({
      path: path.posix.join(modelDir, env.SCANNER_MODEL ?? DEFAULT_MODEL, file),
      content: readFileSync(path.join(TINY_MODEL, file)),
      uid: 1000,
    })),
  };
}

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error("the stack rehearsal needs root (dockerd, apt-get)");
  ensureDebianPackages({ dockerd: "docker.io", docker: "docker.io", debootstrap: "debootstrap" });
  stack = await timed("declare", () => declaredLocalStack(operatorEnv()));
  const checkout = operatorCheckout(path.join(ENGINE_DIR, "operator-checkout"));

  // runc refuses a container nofile limit above the daemon's own hard limit (analytics-db declares 262144).
  const nofile = Math.max(
    0,
    ...stack.containers.flatMap((c) => c.ulimits.filter((u) => u.name === "nofile").map((u) => u.hard)),
  );
  const raisable =
    nofile <= hardNofile() || spawnSync("prlimit", [`--nofile=${nofile}:${nofile}`, "true"]).status === 0;
  if (!raisable) {
    nofileCap = hardNofile();
    log(
      `this machine's open-files hard limit is ${nofileCap} and cannot be raised (no CAP_SYS_RESOURCE): declared nofile ulimits above it are capped to it`,
    );
  }
  await stopLeftoverDaemon(ENGINE_DIR);
  engine = await DockerEngine.start(ENGINE_DIR, 60_000, raisable && nofile > hardNofile() ? { nofile } : {});
  docker = new Docker({ socketPath: engine.host.replace(/^unix:\/\//, "") });
  log(`dockerd pid ${engine.pid} on ${engine.host}`);

  await timed("build own images", async () => {
    const built = new Map(
      stack.containers.flatMap((c) => (c.image.kind === "built" ? [[c.image.ref, c.image]] : [])),
    );
    for (const image of built.values()) {
      if (image.kind !== "built") continue;
      const r = await buildDeclaredImage(engine, {
        imageName: image.ref,
        context: inCheckout(checkout, image.context),
        dockerfile: inCheckout(checkout, image.dockerfile),
      });
      if (r.status !== 0) throw new Error(`docker build of ${image.ref} failed:\n${r.tail}`);
    }
  });
  await timed("build stand-ins", async () => {
    const pulled = [
      ...new Set(stack.containers.flatMap((c) => (c.image.kind === "pulled" ? [c.image.ref] : []))),
    ];
    await buildStandIns(engine, pulled, path.join(ENGINE_DIR, "stand-in-context"));
  });
  await timed("create", () => createAll(false));
});

/**
 * Creates the declared stack (`keepVolumes`: on the volumes of the earlier creation) and the operator's model
 * server and MCP server on the stack's network.
 */
async function createAll(keepVolumes: boolean): Promise<void> {
  const network = stack.networks[0]?.name;
  if (!network) throw new Error("the program declares no network");
  await removeOperatorServers(docker);
  await createStack(docker, stack, { seeds: scannerSeed(), nofileCap, log, keepVolumes });
  await startOperatorServers(docker, network);
}

afterAll(async () => {
  log(`timings (s): ${JSON.stringify(timings)}`);
  await engine?.stop();
});

describe("the local stack on a real engine", () => {
  it("runs every declared container from its declared image", async () => {
    for (const c of stack.containers) {
      const info = await docker.getContainer(c.name).inspect();
      expect(info.Config.Image, c.name).toBe(c.image.ref);
      if (c.oneShot) expect(info.State.ExitCode, `${c.name} (one-shot) exit code`).toBe(0);
      else expect(info.State.Running, `${c.name} is running`).toBe(true);
    }
  });

  it("turns every declared health check healthy (Docker's own status)", async () => {
    await timed("healthy", async () => {
      const failures: string[] = [];
      await Promise.all(
        stack.containers
          .filter((c) => c.healthcheck)
          .map((c) => waitHealthy(docker, c.name, 6 * 60_000).catch((e: Error) => failures.push(e.message))),
      );
      expect(failures, failures.join("\n\n")).toEqual([]);
    });
  });

  it("has every Prometheus scrape target up", async () => {
    const metrics = stack.containers.find((c) => c.name === "metrics")?.ports[0];
    if (!metrics) throw new Error("the program publishes no Prometheus port");
    let targets: { labels: { job: string }; health: string; lastError: string }[] = [];
    for (let i = 0; i < 90; i++) {
      const r = await fetch(`http://${metrics.ip}:${metrics.external}/api/v1/targets`).catch(() => undefined);
      if (r?.ok) {
        targets = ((await r.json()) as { data: { activeTargets: typeof targets } }).data.activeTargets;
        if (targets.length > 0 && targets.every((t) => t.health === "up")) break;
      }
      await sleep(2000);
    }
    const down = targets
      .filter((t) => t.health !== "up")
      .map((t) => `${t.labels.job}: ${t.health} ${t.lastError}`);
    expect(targets.length, "active targets").toBeGreaterThan(0);
    expect(down, down.join("\n")).toEqual([]);
  });

  it("has its alertmanager and reloads its rules through POST /-/reload", async () => {
    const metrics = stack.containers.find((c) => c.name === "metrics")?.ports[0];
    if (!metrics) throw new Error("the program publishes no Prometheus port");
    const base = `http://${metrics.ip}:${metrics.external}`;
    let active: { url: string }[] = [];
    for (let i = 0; i < 30 && active.length === 0; i++) {
      const r = await fetch(`${base}/api/v1/alertmanagers`);
      active = ((await r.json()) as { data: { activeAlertmanagers: { url: string }[] } }).data
        .activeAlertmanagers;
      if (active.length === 0) await sleep(2000);
    }
    expect(active.map((a) => a.url).join(", "), "Prometheus's active alertmanagers").toMatch(/alert/);
    const reload = await fetch(`${base}/-/reload`, { method: "POST" });
    expect(reload.status, await reload.text()).toBe(200);
    const rules = (await (await fetch(`${base}/api/v1/rules`)).json()) as { data: { groups: unknown[] } };
    expect(rules.data.groups.length, "rule groups after the reload").toBeGreaterThan(0);
  });

  it("publishes no host port of a database", async () => {
    for (const name of DATASTORES) {
      const info = await docker.getContainer(name).inspect();
      const bound = Object.values(info.NetworkSettings.Ports ?? {}).flatMap((b) => b ?? []);
      expect(bound, `${name} host ports`).toEqual([]);
    }
  });

  it("runs the services this repository builds as non-root", async () => {
    for (const name of OWN_SERVICES) {
      const exec = await docker.getContainer(name).exec({
        Cmd: ["sh", "-c", "grep '^Uid:' /proc/1/status"],
        AttachStdout: true,
        AttachStderr: true,
      });
      const stream = await exec.start({});
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      const uid = /Uid:\s+(\d+)/.exec(Buffer.concat(chunks).toString("latin1"))?.[1];
      expect(uid, `${name} uid of process 1 (${await healthOf(docker, name)})`).toBeDefined();
      expect(Number(uid), `${name} uid`).toBeGreaterThan(0);
    }
  });

  it("passes scripts/smoke-test.sh with the operator's model (its eight checks, all checks passed)", async () => {
    await waitHealthy(docker, OPERATOR_MODEL.container, 120_000);
    const { status, output } = await timed("smoke test", () => runSmokeTest(stack));
    expect(output).toContain("all checks passed");
    expect(status, output).toBe(0);
  });

  it("calls a tool of the operator's MCP server through the gateway's /mcp with a virtual key, booked in spend_logs", async () => {
    await waitHealthy(docker, OPERATOR_MCP_SERVER.container, 120_000);
    const r = await timed("mcp tool call", () => toolCallThroughGateway(access()));
    const server = OPERATOR_MCP_SERVER.name;
    expect(r.tools, "the tools the granted key lists").toEqual(
      expect.arrayContaining([`${server}-echo`, `${server}-add`]),
    );
    expect(r.answer).toBe("Echo: from the rehearsal");
    expect(r.rows, "the key's call_mcp_tool spend rows").toEqual([
      `${server}|${server}-echo|200|${OPERATOR_MCP_SERVER.costPerQuery}`,
    ]);
  });

  it("loses no spend row when relational-db restarts under traffic", async () => {
    const r = await timed("restart under traffic", () => restartUnderTraffic(access()));
    expect(r.answered, "completions answered 200").toBeGreaterThan(0);
    expect(
      r.writesFailed,
      "a spend write failed during the restart (the restart reached the spend path)",
    ).toBe(true);
    expect(r.rows, `spend rows vs completions answered 200 (${JSON.stringify(r.statuses)})`).toBe(r.answered);
  });

  it("round-trips keys and spend through scripts/platform.sh backup and restore (Mongo half: a stand-in)", async () => {
    const r = await timed("backup and restore", () => backupRoundTrip(access()));
    log(`backup and restore: ${JSON.stringify(r)}`);
    expect(r.backedUp.rows, "spend rows before the backup").toBe(3);
    expect(r.statusLost, "the revoked key before the restore").toBe(401);
    expect(r.lost.rows, "spend rows after the loss").toBe(0);
    expect(r.restored, "spend rows and key spend after the restore").toEqual(r.backedUp);
    expect(r.statusRestored, "the restored key").toBe(200);
  });

  it("keeps a key made before when every container is created again on the same volumes", async () => {
    const r = await timed("second run", () => secondRunKeepsKeys(access(), () => createAll(true)));
    expect(r.before, "the key before the second run").toBe(200);
    expect(r.after, "the key after the second run").toBe(200);
  });
});
