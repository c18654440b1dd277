/**
 * scripts/smoke-test.sh against real parts (./smoke-target.ts): a real gateway tracing into the Langfuse
 * contract fake, its prompt_injection guardrail calling the real scanner with the tiny model, and a real
 * Prometheus scraping it; a second real gateway with tracing and guardrails off shows the checks that must
 * then fail.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../infra/files.js";
import { prometheusToolsMissing } from "../monitoring/harness.js";
import { type SmokeGateway, type SmokeTarget, startSmokeTarget } from "./smoke-target.js";

const SCRIPT = path.join(REPO_ROOT, "scripts/smoke-test.sh");
const skip = prometheusToolsMissing();

/** Runs the script with `args`; resolves its exit status and output (never rejects). */
function smoke(args: string[]): Promise<{ status: number; stdout: string }> {
  return new Promise((done) => {
    execFile(
      "bash",
      [SCRIPT, "--env-file", "/dev/null", "--wait", "10", ...args],
      { env: { PATH: process.env.PATH ?? "" }, timeout: 60_000 },
      (error, stdout) => done({ status: error ? Number(error.code ?? 1) : 0, stdout }),
    );
  });
}

let t: SmokeTarget;
let full: SmokeGateway;
let bare: SmokeGateway;

beforeAll(async () => {
  if (skip) return;
  t = await startSmokeTarget({ bare: true });
  full = t.full;
  bare = t.bare as SmokeGateway;
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe.skipIf(skip !== undefined)(`scripts/smoke-test.sh ${skip ?? ""}`, () => {
  it("passes all eight checks against the real gateway, trace viewer fake, scanner and Prometheus", async () => {
    const run = await smoke(t.options(full));
    expect(run.stdout).toMatch(/^1\/8 gateway liveness: ok$/m);
    expect(run.stdout).toMatch(/^2\/8 model list: ok \(general\)$/m);
    expect(run.stdout).toMatch(/^3\/8 chat completion: ok \(trace [0-9a-f]{32}\)$/m);
    expect(run.stdout).toMatch(/^4\/8 streamed completion: ok \(\d+ chunks\)$/m);
    expect(run.stdout).toMatch(/^5\/8 unknown model: ok \(4\d\d\)$/m);
    expect(run.stdout).toMatch(/^6\/8 trace: ok \(\d+ observations of trace [0-9a-f]{32}\)$/m);
    expect(run.stdout).toMatch(/^7\/8 request counter: ok \(\d+ requests\)$/m);
    // The tiny model scores the script's injection text near 1, above the policy's threshold: blocked.
    expect(run.stdout).toMatch(/^8\/8 prompt-injection decision: ok \(prompt_injection=block:[0-9.]+\)$/m);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe("all checks passed");
    expect(run.status).toBe(0);

    // The trace read back is the one the gateway sent for check 3, and its generation names the model.
    const traceId = /3\/8 chat completion: ok \(trace ([0-9a-f]+)\)/.exec(run.stdout)?.[1] ?? "";
    const observations = t.langfuse.observations.filter((o) => o.traceId === traceId);
    expect(observations.map((o) => o.type)).toContain("GENERATION");
    // The counter the script read is Prometheus's scrape of the gateway's own /metrics.
    const counted = (await full.prometheus.query("sum(litellm_proxy_total_requests_metric_total)")).data
      .result;
    expect(Number(counted[0]?.value[1])).toBeGreaterThanOrEqual(2);
    // The completions reached the upstream: one plain, one streamed; the unknown model and the blocked call did not.
    expect(t.upstream.requests.filter((r) => r.body !== undefined).length).toBe(2);
  });

  it("fails the trace and the decision on a gateway without tracing and guardrails, and exits 1", async () => {
    const run = await smoke([...t.options(bare), "--wait", "5"]);
    for (const n of [1, 2, 3, 4, 5, 7]) expect(run.stdout).toMatch(new RegExp(`^${n}/8 .*: ok`, "m"));
    expect(run.stdout).toMatch(
      /^6\/8 trace: FAILED: the completion of check 3 carried no x-trace-id header$/m,
    );
    expect(run.stdout).toContain("inspect: TRACE_HOST and TRACE_PUBLIC_KEY in .env");
    expect(run.stdout).toMatch(
      /^8\/8 prompt-injection decision: FAILED: no prompt_injection entry in x-guardrail-decisions and none in litellm_guardrail_requests_total$/m,
    );
    expect(run.stdout).toMatch(/inspect: .*platform\.sh logs scanner/);
    expect(run.stdout).toContain("2 of 8 checks failed");
    expect(run.stdout).not.toContain("all checks passed");
    expect(run.status).toBe(1);
  });

  it("fails the trace check when the trace viewer refuses the keys, with its last answer", async () => {
    const run = await smoke([
      ...t.options(full, { publicKey: t.langfuse.publicKey, secretKey: "sk-lf-wrong" }),
      "--wait",
      "2",
    ]);
    expect(run.stdout).toMatch(
      /^6\/8 trace: FAILED: trace [0-9a-f]{32} not found in .* after 2s \(last answer 401\)$/m,
    );
    expect(run.stdout).toContain("inspect: ./scripts/platform.sh logs trace-web");
    expect(run.status).toBe(1);
  });

  it("names the gateway's logs when it is down, and a wrong key on the model list", async () => {
    const down = await smoke([...t.options(full), "--gateway-url", "http://127.0.0.1:9", "--wait", "1"]);
    expect(down.stdout).toMatch(/^1\/8 gateway liveness: FAILED: GET \/health\/liveliness answered 000/m);
    expect(down.stdout).toContain("inspect: ./scripts/platform.sh ps; ./scripts/platform.sh logs gateway");
    expect(down.status).toBe(1);
    const wrongKey = await smoke([...t.options(full), "--key", "sk-wrong", "--wait", "1"]);
    expect(wrongKey.stdout).toMatch(/^2\/8 model list: FAILED: GET \/v1\/models answered 401/m);
    expect(wrongKey.stdout).toContain("the key (--key / GATEWAY_MASTER_KEY in .env)");
    expect(wrongKey.status).toBe(1);
  });

  it("lists its options with --help", async () => {
    const help = await smoke(["--help"]);
    for (const flag of ["--gateway-url", "--key", "--model", "--trace-url", "--metrics-url", "--wait"])
      expect(help.stdout).toContain(flag);
    expect(help.status).toBe(0);
  });
});
