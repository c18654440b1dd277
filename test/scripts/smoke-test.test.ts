/**
 * scripts/smoke-test.sh against a real gateway (in process, fake OpenAI-compatible upstream), with contract
 * fakes for what cannot run here: the trace viewer's observations API and Prometheus's query API (which
 * scrapes the gateway's real /metrics).
 *
 * The gateway of this checkout sends neither `x-trace-id` nor `x-guardrail-decisions` yet (the tracing and
 * guardrail work adds them): for the all-pass run a pass-through proxy in front of the gateway adds them as
 * those features will, and registers the trace with the trace-viewer fake after a delay (Langfuse shows a trace
 * seconds after ingestion). The run without the proxy shows checks 6 and 8 failing with what to inspect.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../infra/files.js";
import {
  type FakeLangfuseObservations,
  startFakeLangfuseObservations,
} from "../fixtures/langfuse-observations-api.js";
import { type FakeUpstream, startFakeUpstream } from "../fixtures/openai-upstream.js";
import { type FakePrometheus, startFakePrometheus } from "../fixtures/prometheus-query-api.js";
import { deployment, MASTER_KEY, startTestGateway, type TestGateway } from "../helpers/gateway.js";

const SCRIPT = path.join(REPO_ROOT, "scripts/smoke-test.sh");
const PK = "pk-lf-smoke";
const SK = "sk-lf-smoke";

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

/**
 * A pass-through proxy to `target` adding `x-trace-id` to every chat completion (and making that trace known
 * to `langfuse` 1.5 s later) and an `x-guardrail-decisions` prompt_injection entry.
 */
async function startHeaderProxy(target: string, langfuse: FakeLangfuseObservations): Promise<Server> {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const upstream = request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        const headers = { ...answer.headers };
        if (req.url?.endsWith("/chat/completions")) {
          const traceId = randomUUID().replaceAll("-", "");
          headers["x-trace-id"] = traceId;
          headers["x-guardrail-decisions"] = "pii=allow; prompt_injection=allow:0.03";
          setTimeout(() => langfuse.addTrace(traceId, "general"), 1500);
        }
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return server;
}

let upstream: FakeUpstream;
let gateway: TestGateway;
let prometheus: FakePrometheus;
let langfuse: FakeLangfuseObservations;
let proxy: Server;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startTestGateway(`model_list:\n${deployment("general", upstream.url)}`);
  prometheus = await startFakePrometheus([gateway.url]);
  langfuse = await startFakeLangfuseObservations(PK, SK);
  proxy = await startHeaderProxy(gateway.url, langfuse);
});

afterAll(async () => {
  await new Promise((done) => proxy?.close(done));
  await Promise.all([langfuse?.close(), prometheus?.close(), gateway?.close(), upstream?.close()]);
});

const common = () => [
  "--key",
  MASTER_KEY,
  "--trace-url",
  langfuse.url,
  "--trace-public-key",
  PK,
  "--trace-secret-key",
  SK,
  "--metrics-url",
  prometheus.url,
];

describe("scripts/smoke-test.sh", () => {
  it("passes all eight checks when every part answers, and says so last", async () => {
    const { port } = proxy.address() as AddressInfo;
    const run = await smoke(["--gateway-url", `http://127.0.0.1:${port}`, ...common()]);
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
    expect(langfuse.lookups.filter((id) => id === traceId).length).toBeGreaterThan(1);
    expect(prometheus.queries).toContain("sum(litellm_proxy_total_requests_metric_total)");
    // The completions reached the upstream: two plain, one streamed (the unknown model did not).
    expect(upstream.requests.filter((r) => r.body !== undefined).length).toBeGreaterThanOrEqual(3);
  });

  it("fails the checks the gateway cannot satisfy, naming what to inspect, and exits 1", async () => {
    const run = await smoke(["--gateway-url", gateway.url, ...common()]);
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
    const down = await smoke(["--gateway-url", "http://127.0.0.1:9", ...common(), "--wait", "1"]);
    expect(down.stdout).toMatch(/^1\/8 gateway liveness: FAILED: GET \/health\/liveliness answered 000/m);
    expect(down.stdout).toContain("inspect: ./scripts/platform.sh ps; ./scripts/platform.sh logs gateway");
    expect(down.status).toBe(1);
    const wrongKey = await smoke([
      "--gateway-url",
      gateway.url,
      ...common(),
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
