/**
 * scripts/bootstrap.sh with stand-ins for `pulumi` and `docker` on PATH (the Pulumi CLI cannot be installed
 * here, and a real `pulumi up` needs registries): each stand-in records its arguments, one call per line.
 * The pulumi stand-in keeps the stacks it was asked to create and answers `stack output` with URLs of a real
 * gateway, the Langfuse fake and a real Prometheus (./smoke-target.ts), so the smoke test bootstrap runs is real.
 * Each run uses its own platform root (PLATFORM_ROOT) holding copies of .env.example and litellm/config.yaml.
 */
import { execFile } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REPO_ROOT } from "../../infra/files.js";
import {
  MASTER_KEY,
  type SmokeTarget,
  startSmokeTarget,
  TRACE_PUBLIC_KEY,
  TRACE_SECRET_KEY,
} from "./smoke-target.js";

const SCRIPT = path.join(REPO_ROOT, "scripts/bootstrap.sh");

/** A stand-in that appends `<name> <args…>` to $STANDIN_LOG, then behaves as the case statement says. */
function standIn(name: string, body: string): string {
  return `#!/usr/bin/env bash\nprintf '%s\\n' "${name} $*" >>"$STANDIN_LOG"\n${body}\n`;
}

const PULUMI = standIn(
  "pulumi",
  `case "$1 $2" in
  "stack select") [[ -f "$STANDIN_STATE/stack-$3" ]] || { echo "error: no stack named '$3' found" >&2; exit 255; } ;;
  "stack init") touch "$STANDIN_STATE/stack-$3"; echo "Created stack '$3'" ;;
  "stack output") cat "$STANDIN_OUTPUTS" ;;
  "up --yes") echo "Updating (stand-in)"; echo "Resources: 42 unchanged" ;;
esac
exit 0`,
);

const DOCKER = standIn(
  "docker",
  `case "$1" in
  info) [[ -z "\${STANDIN_DOCKER_DOWN:-}" ]] || { echo "Cannot connect to the Docker daemon" >&2; exit 1; } ;;
  model) [[ "$2" == version || "$2" == pull ]] || exit 1 ;;
esac
exit 0`,
);

interface Run {
  status: number;
  stdout: string;
  stderr: string;
  /** Recorded stand-in calls, e.g. "pulumi up --yes --stack local". */
  calls: string[];
}

let target: SmokeTarget;

beforeAll(async () => {
  target = await startSmokeTarget();
});

afterAll(async () => {
  await target?.close();
});

/** A platform root and stand-in folder; `gatewayUrl` is what `pulumi stack output` names as the gateway. */
function setUp(options: { gatewayUrl?: string; withPulumi?: boolean } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), "bootstrap-"));
  const root = path.join(dir, "root");
  const bin = path.join(dir, "bin");
  const state = path.join(dir, "standin-state");
  for (const d of [root, bin, state, path.join(root, "litellm")]) mkdirSync(d, { recursive: true });
  copyFileSync(path.join(REPO_ROOT, ".env.example"), path.join(root, ".env.example"));
  copyFileSync(path.join(REPO_ROOT, "litellm/config.yaml"), path.join(root, "litellm/config.yaml"));
  if (options.withPulumi !== false) writeFileSync(path.join(bin, "pulumi"), PULUMI);
  writeFileSync(path.join(bin, "docker"), DOCKER);
  for (const f of ["pulumi", "docker"])
    if (existsSync(path.join(bin, f))) chmodSync(path.join(bin, f), 0o755);
  const gateway = options.gatewayUrl ?? target.full.url;
  const outputs = {
    urls: {
      chat: "http://localhost:3080",
      console: "http://localhost:3001",
      gateway,
      gatewayApi: `${gateway}/v1`,
      trace: target.langfuse.url,
      dashboards: "http://localhost:3030",
      metrics: target.full.prometheus.url,
      alertmanager: "http://localhost:9093",
    },
    traceLogin: { email: "admin@platform.local", password: "trace-pw" },
    dashboardsLogin: { user: "admin", password: "dash-pw" },
    gatewayMasterKey: MASTER_KEY,
  };
  writeFileSync(path.join(dir, "outputs.json"), JSON.stringify(outputs));
  const log = path.join(dir, "calls.log");
  writeFileSync(log, "");
  const run = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
    new Promise((done) =>
      execFile(
        "bash",
        [SCRIPT, ...args],
        {
          timeout: 120_000,
          env: {
            PATH: `${bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
            HOME: dir,
            PLATFORM_ROOT: root,
            STANDIN_LOG: log,
            STANDIN_STATE: state,
            STANDIN_OUTPUTS: path.join(dir, "outputs.json"),
            ...env,
          },
        },
        (error, stdout, stderr) => {
          const calls = readFileSync(log, "utf8").split("\n").filter(Boolean);
          writeFileSync(log, "");
          done({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr, calls });
        },
      ),
    );
  return { root, bin, run };
}

const models = (root: string) =>
  (parse(readFileSync(path.join(root, "litellm/config.yaml"), "utf8")).model_list ?? []) as {
    model_name: string;
    litellm_params: Record<string, string>;
    model_info?: { tags: string[] };
  }[];

// Each run starts tsx (env-file, add-model) a few times: seconds each on a loaded machine.
describe("scripts/bootstrap.sh", { timeout: 120_000 }, () => {
  it("without flags and without a terminal: starts the stack only, in order, and a re-run changes nothing", async () => {
    const { root, run } = setUp();
    const first = await run([]);
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    const state = `file://${root}/.pulumi/state`;
    expect(first.calls).toEqual([
      "docker info",
      `pulumi login ${state}`,
      "pulumi stack select local",
      "pulumi stack init local",
      "pulumi up --yes --stack local",
      "pulumi stack output --stack local --json --show-secrets",
    ]);
    const env = readFileSync(path.join(root, ".env"), "utf8");
    expect(env).toMatch(/^GATEWAY_MASTER_KEY=sk-[A-Za-z0-9]{48}$/m);
    const passphrase = readFileSync(path.join(root, ".pulumi/passphrase"), "utf8");
    expect(passphrase.trim().length).toBeGreaterThan(20);
    expect(first.stdout).toContain("no model registered now");
    expect(first.stdout).toContain("smoke test skipped: no model registered");
    expect(first.stdout).toMatch(/dashboards +http:\/\/localhost:3030 +login admin \/ dash-pw/);
    expect(first.stdout).toMatch(
      /traces +http:\/\/127\.0\.0\.1:\d+ +login admin@platform\.local \/ trace-pw/,
    );
    expect(models(root)).toEqual([]);

    const again = await run([]);
    expect(again.status).toBe(0);
    expect(again.calls).not.toContain("pulumi stack init local");
    expect(again.calls).toContain("pulumi stack select local");
    expect(again.stdout).toContain(".env: up to date");
    expect(readFileSync(path.join(root, ".env"), "utf8")).toBe(env);
    expect(readFileSync(path.join(root, ".pulumi/passphrase"), "utf8")).toBe(passphrase);
  });

  it("registers a remote model before pulumi up and passes the smoke test; a re-run registers nothing twice", async () => {
    const { root, run } = setUp();
    // Values the operator set are kept: the trace viewer keys the fake accepts.
    writeFileSync(
      path.join(root, ".env"),
      `TRACE_PUBLIC_KEY=${TRACE_PUBLIC_KEY}\nTRACE_SECRET_KEY=${TRACE_SECRET_KEY}\n`,
    );
    const args = ["--backend", "remote", "--model", "general", "--api-base", target.upstream.url, "--yes"];
    const first = await run(args);
    expect(first.stdout).toMatch(/^8\/8 prompt-injection decision: ok/m);
    expect(first.stdout).toContain("all checks passed");
    expect(first.status).toBe(0);
    expect(models(root)).toEqual([
      { model_name: "general", litellm_params: { model: "openai/general", api_base: target.upstream.url } },
    ]);
    expect(first.stdout.indexOf("registered general")).toBeLessThan(first.stdout.indexOf("Resources: 42"));
    expect(readFileSync(path.join(root, ".env"), "utf8")).toContain(`TRACE_PUBLIC_KEY=${TRACE_PUBLIC_KEY}\n`);

    const again = await run([...args, "--skip-smoke-test"]);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain("general is already registered");
    expect(again.stdout).toContain("smoke test skipped (--skip-smoke-test)");
    expect(models(root)).toHaveLength(1);
  });

  it("vm stack with a domain: selects stack vm, sets platform:domain, checks ssh, not the local daemon", async () => {
    const { run } = setUp();
    const r = await run(["--stack", "vm", "--domain", "ai.example.org", "--backend", "skip", "--yes"]);
    expect(r.status).toBe(0);
    expect(r.calls).not.toContain("docker info");
    expect(r.calls).toContain("pulumi stack init vm");
    expect(r.calls).toContain("pulumi config set --stack vm platform:domain ai.example.org");
    expect(r.calls).toContain("pulumi up --yes --stack vm");
    expect(r.stdout).toMatch(/ssh +\/\S+ssh/);
  });

  it("local-runner pulls the model unless --skip-pull; mock-npu clones it tagged npu", async () => {
    const { root, run } = setUp();
    const base = ["--backend", "local-runner", "--model", "ai/smollm2", "--skip-smoke-test", "--yes"];
    const pulled = await run(base);
    expect(pulled.status).toBe(0);
    expect(pulled.calls).toContain("docker model pull ai/smollm2");
    expect(pulled.calls.indexOf("docker model pull ai/smollm2")).toBeLessThan(
      pulled.calls.indexOf("pulumi up --yes --stack local"),
    );
    const skipped = await run([...base, "--skip-pull"]);
    expect(skipped.calls.filter((c) => c.startsWith("docker model"))).toEqual([]);

    const npu = await run(["--backend", "mock-npu", "--model", "ai/smollm2", "--skip-smoke-test", "--yes"]);
    expect(npu.status).toBe(0);
    expect(models(root).map((m) => [m.model_name, m.model_info?.tags])).toEqual([
      ["ai/smollm2", undefined],
      ["ai/smollm2-npu", ["npu"]],
    ]);
  });

  it("stops before pulumi up when the model cannot be registered", async () => {
    const { run } = setUp();
    const r = await run(["--backend", "mock-npu", "--yes"]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      "mock-npu clones a registered model, and litellm/config.yaml registers none yet",
    );
    expect(r.calls.some((c) => c.startsWith("pulumi up"))).toBe(false);
  });

  it("names a missing tool with how to install it, and an unreachable daemon, before doing anything", async (ctx) => {
    if (["/usr/bin/pulumi", "/bin/pulumi", "/usr/local/bin/pulumi"].some(existsSync))
      return ctx.skip("a real pulumi is installed on this machine's PATH");
    const noPulumi = setUp({ withPulumi: false });
    const r = await noPulumi.run(["--yes"]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/pulumi +MISSING: curl -fsSL https:\/\/get\.pulumi\.com \| sh/);
    expect(r.stderr).toContain("install the missing tools above");
    expect(r.calls).toEqual([]);
    expect(existsSync(path.join(noPulumi.root, ".env"))).toBe(false);

    const down = await setUp().run(["--yes"], { STANDIN_DOCKER_DOWN: "1" });
    expect(down.status).toBe(1);
    expect(down.stderr).toContain("the Docker daemon does not answer");
    expect(down.calls).toEqual(["docker info"]);
  });

  it("waits for the gateway, then names what to inspect when it never answers", async () => {
    const { run } = setUp({ gatewayUrl: "http://127.0.0.1:9" });
    const r = await run(["--yes"], { BOOTSTRAP_HEALTH_TIMEOUT: "6" });
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(
      "waiting for the gateway (http://127.0.0.1:9/health/liveliness, up to 5 minutes)",
    );
    expect(r.stdout).toMatch(/gateway not answering yet \(\d+ s left\)/);
    expect(r.stderr).toContain("scripts/platform.sh logs gateway");
  });

  it("refuses unknown flags and missing values, and lists its flags with --help", async () => {
    const { run } = setUp();
    const unknown = await run(["--nope"]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown argument --nope");
    const needsModel = await run(["--backend", "cloud", "--yes"]);
    expect(needsModel.status).toBe(1);
    expect(needsModel.stderr).toContain("--backend cloud needs --model");
    const help = await run(["--help"]);
    for (const flag of [
      "--backend",
      "local-runner",
      "cloud",
      "remote",
      "mock-npu",
      "skip",
      "--model",
      "--domain",
      "--skip-pull",
      "--skip-smoke-test",
      "--stack",
      "--yes",
    ])
      expect(help.stdout).toContain(flag);
    expect(help.calls).toEqual([]);
  });
});
