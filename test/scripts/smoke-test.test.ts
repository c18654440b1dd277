/**
 * scripts/smoke-test.sh against a real gateway and contract fakes of the trace viewer and Prometheus
 * (./smoke-target.ts says what is real and what stands in).
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../infra/files.js";
import { type SmokeTarget, startSmokeTarget } from "./smoke-target.js";

const SCRIPT = path.join(REPO_ROOT, "scripts/smoke-test.sh");

/** Runs the script with `args`; resolves its exit status and output (never rejects). */
function smoke(args: string[]): Promise<{ status: number; stdout: string }> {
  return new Promise((done) => {
    execFile(
      "bash",
      [SCRIPT, "--env-file", "/dev/null", "--wait", "5", ...args],
      { env: { PATH: process.env.PATH ?? "" }, timeout: 60_000 },
      (error, stdout) => done({ status: error ? Number(error.code ?? 1) : 0, stdout }),
    );
  });
}

let t: SmokeTarget;

beforeAll(async () => {
  t = await startSmokeTarget();
});

afterAll(async () => {
  await t?.close();
});

describe("scripts/smoke-test.sh", () => {
  it("passes all eight checks when every part answers, and says so last", async () => {
    const run = await smoke(["--gateway-url", t.headerProxyUrl, ...t.options]);
    expect(run.stdout).toMatch(/^1\/8 gateway liveness: ok$/m);
    expect(run.stdout).toMatch(/^2\/8 model list: ok \(general\)$/m);
    expect(run.stdout).toMatch(/^3\/8 chat completion: ok \(trace [0-9a-f]{32}\)$/m);
    expect(run.stdout).toMatch(/^4\/8 streamed completion: ok \(\d+ chunks\)$/m);
    expect(run.stdout).toMatch(/^5\/8 unknown model: ok \(4\d\d\)$/m);
    expect(run.stdout).toMatch(/^6\/8 trace: ok \(1 observations of trace [0-9a-f]{32}\)$/m);
    expect(run.stdout).toMatch(/^7\/8 request counter: ok \(\d+ requests\)$/m);
    expect(run.stdout).toMatch(/^8\/8 prompt-injection decision: ok \(prompt_injection=allow:0.03\)$/m);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe("all checks passed");
    expect(run.status).toBe(0);
    // The trace asked for is the one of check 3, polled until it appeared.
    const traceId = /3\/8 chat completion: ok \(trace ([0-9a-f]+)\)/.exec(run.stdout)?.[1];
    expect(t.langfuse.lookups.filter((id) => id === traceId).length).toBeGreaterThan(1);
    expect(t.prometheus.queries).toContain("sum(litellm_proxy_total_requests_metric_total)");
    // The completions reached the upstream: two plain, one streamed (the unknown model did not).
    expect(t.upstream.requests.filter((r) => r.body !== undefined).length).toBeGreaterThanOrEqual(3);
  });

  it("fails the checks the gateway cannot satisfy, naming what to inspect, and exits 1", async () => {
    const run = await smoke(["--gateway-url", t.gatewayUrl, ...t.options]);
    for (const n of [1, 2, 3, 4, 5, 7]) expect(run.stdout).toMatch(new RegExp(`^${n}/8 .*: ok`, "m"));
    expect(run.stdout).toMatch(
      /^6\/8 trace: FAILED: the completion of check 3 carried no x-trace-id header$/m,
    );
    expect(run.stdout).toMatch(/^8\/8 prompt-injection decision: FAILED: /m);
    expect(run.stdout).toMatch(/inspect: .*platform\.sh logs scanner/);
    expect(run.stdout).toContain("2 of 8 checks failed");
    expect(run.stdout).not.toContain("all checks passed");
    expect(run.status).toBe(1);
  });

  it("names the gateway's logs when it is down, and a wrong key on the model list", async () => {
    const down = await smoke(["--gateway-url", "http://127.0.0.1:9", ...t.options, "--wait", "1"]);
    expect(down.stdout).toMatch(/^1\/8 gateway liveness: FAILED: GET \/health\/liveliness answered 000/m);
    expect(down.stdout).toContain("inspect: ./scripts/platform.sh ps; ./scripts/platform.sh logs gateway");
    expect(down.status).toBe(1);
    const wrongKey = await smoke([
      "--gateway-url",
      t.gatewayUrl,
      ...t.options,
      "--key",
      "sk-wrong",
      "--wait",
      "1",
    ]);
    expect(wrongKey.stdout).toMatch(/^2\/8 model list: FAILED: GET \/v1\/models answered 401/m);
    expect(wrongKey.stdout).toContain("the key (--key / GATEWAY_MASTER_KEY in .env)");
  });

  it("lists its options with --help", async () => {
    const help = await smoke(["--help"]);
    for (const flag of ["--gateway-url", "--key", "--model", "--trace-url", "--metrics-url", "--wait"])
      expect(help.stdout).toContain(flag);
    expect(help.status).toBe(0);
  });
});
