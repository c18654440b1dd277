/**
 * What scripts/smoke-test.sh talks to, for the tests of the scripts: a real gateway (in process) serving the
 * model `general` from the OpenAI-compatible fake upstream, and contract fakes for what cannot run here, the
 * trace viewer's observations API and Prometheus's query API (which scrapes the gateway's real /metrics).
 *
 * The gateway of this checkout sends neither `x-trace-id` nor `x-guardrail-decisions` yet (the tracing and
 * guardrail work adds them): `headerProxyUrl` is a pass-through proxy in front of the gateway that adds them as
 * those features will, and registers the trace with the trace-viewer fake 1.5 s later (Langfuse shows a trace
 * seconds after ingestion). `gatewayUrl` is the gateway itself.
 */
import { randomUUID } from "node:crypto";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type FakeLangfuseObservations,
  startFakeLangfuseObservations,
} from "../fixtures/langfuse-observations-api.js";
import { type FakeUpstream, startFakeUpstream } from "../fixtures/openai-upstream.js";
import { type FakePrometheus, startFakePrometheus } from "../fixtures/prometheus-query-api.js";
import { deployment, MASTER_KEY, startTestGateway, type TestGateway } from "../helpers/gateway.js";

/** Trace viewer key pair the fake accepts. */
export const TRACE_PUBLIC_KEY = "pk-lf-smoke";
export const TRACE_SECRET_KEY = "sk-lf-smoke";
export { MASTER_KEY };

/** The running parts. */
export interface SmokeTarget {
  upstream: FakeUpstream;
  gateway: TestGateway;
  prometheus: FakePrometheus;
  langfuse: FakeLangfuseObservations;
  gatewayUrl: string;
  headerProxyUrl: string;
  /** smoke-test.sh options pointing at the fakes (key, trace viewer, metrics). */
  options: string[];
  close(): Promise<void>;
}

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

/** Starts the gateway, the fakes and the header proxy. */
export async function startSmokeTarget(): Promise<SmokeTarget> {
  const upstream = await startFakeUpstream();
  const gateway = await startTestGateway(`model_list:\n${deployment("general", upstream.url)}`);
  const prometheus = await startFakePrometheus([gateway.url]);
  const langfuse = await startFakeLangfuseObservations(TRACE_PUBLIC_KEY, TRACE_SECRET_KEY);
  const proxy = await startHeaderProxy(gateway.url, langfuse);
  const { port } = proxy.address() as AddressInfo;
  return {
    upstream,
    gateway,
    prometheus,
    langfuse,
    gatewayUrl: gateway.url,
    headerProxyUrl: `http://127.0.0.1:${port}`,
    options: [
      "--key",
      MASTER_KEY,
      "--trace-url",
      langfuse.url,
      "--trace-public-key",
      TRACE_PUBLIC_KEY,
      "--trace-secret-key",
      TRACE_SECRET_KEY,
      "--metrics-url",
      prometheus.url,
    ],
    async close() {
      await new Promise((done) => proxy.close(done));
      await Promise.all([langfuse.close(), prometheus.close(), gateway.close(), upstream.close()]);
    },
  };
}
