/**
 * The OTLP/HTTP JSON request the tracer sends for a chat call, a stream, an embedding, a failed call and an MCP
 * tool call, compared with the request the Langfuse-SDK-based exporter sent for the same calls (recorded in
 * `otlp-wire.golden.json` by running this file with `UPDATE_OTLP_GOLDEN=1` on that exporter): same resource,
 * scope, span names, parents, kinds, times, status and attributes (names, types, values), modulo span ids.
 * A tiny HTTP receiver in this file captures the bodies and headers.
 */
import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import {
  readTraceSettings,
  type TraceSettings,
} from "../../../../services/gateway/src/config/trace-settings.js";
import type { CallTrace } from "../../../../services/gateway/src/tracing/call-trace.js";
import { createLangfuseTracer } from "../../../../services/gateway/src/tracing/langfuse-tracer.js";
import type { ToolCallTrace } from "../../../../services/gateway/src/tracing/tool-call-trace.js";

const GOLDEN = new URL("./otlp-wire.golden.json", import.meta.url);
const T0 = Date.UTC(2026, 10, 27, 12, 0, 0, 123);

const chat: CallTrace = {
  name: "chat.completions",
  operation: "chat",
  traceId: "0123456789abcdef0123456789abcdef",
  requestId: "01234567-89ab-cdef-0123-456789abcdef",
  startTime: T0,
  endTime: T0 + 150,
  userId: "alice",
  keyAlias: "alice-app",
  sessionId: "conv-1",
  tags: ["general", "team-a"],
  requestedModel: "general",
  model: "openai/gpt-4o-mini",
  deploymentId: "dep-1",
  modelParameters: { temperature: 0.2, max_tokens: 64, stream: false },
  stream: false,
  input: {
    original: [{ role: "user", content: 'mail me at bob@example.com "quoted" \u2028 é 😀' }],
    sent: [{ role: "user", content: 'mail me at <EMAIL_ADDRESS> "quoted" \u2028 é 😀' }],
  },
  output: { upstream: "ok bob@example.com", returned: "ok <EMAIL_ADDRESS>\n" },
  usage: { input: 12, output: 3, total: 15, input_cached_tokens: 2 },
  costUsd: 0.0000123,
  completionStartTime: T0 + 40,
  status: 200,
  cacheHit: false,
  guardrails: [
    {
      guardrail: "pii",
      hook: "pre_call",
      action: "mask",
      mode: "enforce",
      entities: ["EMAIL_ADDRESS"],
      latencyMs: 2,
    },
    {
      guardrail: "prompt_injection",
      hook: "post_call",
      action: "block",
      mode: "monitor",
      score: 0.93,
      latencyMs: 7,
      detail: "score 0.93",
    },
  ],
};

const stream: CallTrace = {
  ...chat,
  traceId: "1123456789abcdef0123456789abcdef",
  requestId: "11234567-89ab-cdef-0123-456789abcdef",
  sessionId: undefined,
  userId: undefined,
  keyAlias: undefined,
  tags: ["general", "cache_hit"],
  modelParameters: { stream: true, top_p: 1 },
  stream: true,
  output: { returned: "streamed answer" },
  costUsd: 0,
  cacheHit: true,
  guardrails: [],
};

const embedding: CallTrace = {
  name: "embeddings",
  operation: "embeddings",
  traceId: "2123456789abcdef0123456789abcdef",
  requestId: "21234567-89ab-cdef-0123-456789abcdef",
  startTime: T0,
  endTime: T0 + 20,
  userId: "bob",
  tags: ["embed"],
  requestedModel: "embed",
  model: "openai/text-embedding-3-small",
  deploymentId: "dep-2",
  modelParameters: {},
  stream: false,
  input: { original: "embed this text", sent: "embed this text" },
  usage: { input: 4, total: 4 },
  costUsd: 8e-8,
  status: 200,
  cacheHit: false,
  guardrails: [],
};

const failed: CallTrace = {
  ...chat,
  traceId: "3123456789abcdef0123456789abcdef",
  requestId: "31234567-89ab-cdef-0123-456789abcdef",
  status: 502,
  errorType: "upstream_error",
  errorMessage: "upstream_error",
  output: undefined,
  usage: undefined,
  completionStartTime: undefined,
  guardrails: [{ guardrail: "pii", hook: "pre_call", action: "error", mode: "enforce", latencyMs: 1 }],
};

const refused: CallTrace = {
  ...embedding,
  traceId: "4123456789abcdef0123456789abcdef",
  requestId: "41234567-89ab-cdef-0123-456789abcdef",
  model: undefined,
  deploymentId: undefined,
  costUsd: undefined,
  usage: undefined,
  status: 429,
  errorType: "rate_limited",
  errorMessage: "rate_limited",
};

const tool: ToolCallTrace = {
  traceId: "5123456789abcdef0123456789abcdef",
  requestId: "51234567-89ab-cdef-0123-456789abcdef",
  startTime: T0,
  endTime: T0 + 90,
  userId: "alice",
  keyAlias: "alice-app",
  mcpServer: "search",
  tool: "web_search",
  name: "search-web_search",
  input: { original: { query: "a@b.c" }, sent: { query: "<EMAIL_ADDRESS>" } },
  output: { returned: { content: [{ type: "text", text: "found" }] } },
  costUsd: 0.005,
  status: 502,
  outcome: "upstream_error",
  guardrails: [{ guardrail: "pii", hook: "post_call", action: "allow", mode: "enforce", latencyMs: 3 }],
};

interface Captured {
  headers: http.IncomingHttpHeaders;
  body: { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }> };
}

/** Records each call alone (one export request each) and returns the requests' headers and bodies. */
async function capture(
  capture: string,
  thread = "false",
  extraEnv: Record<string, string> = {},
): Promise<Captured[]> {
  const received: Captured[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const settings = readTraceSettings({
    TRACE_HOST: `http://127.0.0.1:${port}`,
    TRACE_PUBLIC_KEY: "pk-lf-wire",
    TRACE_SECRET_KEY: "sk-lf-wire",
    TRACE_FLUSH_INTERVAL_MS: "600000",
    TRACE_CAPTURE_CONTENT: capture,
    TRACE_EXPORT_THREAD: thread,
    ...extraEnv,
  }) as TraceSettings;
  const tracer = createLangfuseTracer(settings, { registry: new Registry(), log: pino({ level: "silent" }) });
  try {
    for (const call of [chat, stream, embedding, failed, refused]) {
      tracer.record(call);
      await tracer.flush();
    }
    tracer.recordToolCall(tool);
    await tracer.flush();
  } finally {
    await tracer.shutdown(1000);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  return received;
}

/**
 * A request without its span ids (each parent id becomes the parent's name), its spans in name order: the order
 * of spans in a request means nothing to the receiver (the SDK's asynchronous span processor varied it).
 */
function normalised(requests: Captured[]): unknown {
  return requests.map(({ headers, body }) => {
    for (const rs of body.resourceSpans) {
      for (const ss of rs.scopeSpans) {
        const names = new Map(ss.spans.map((s) => [s.spanId, s.name]));
        for (const s of ss.spans) {
          expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
          s.parentSpanId = s.parentSpanId === undefined ? undefined : names.get(s.parentSpanId);
          s.spanId = undefined;
        }
        ss.spans.sort((a, b) => String(a.name).localeCompare(String(b.name)));
      }
    }
    return {
      headers: {
        authorization: headers.authorization,
        "content-type": headers["content-type"],
        "content-encoding": headers["content-encoding"],
        "x-langfuse-ingestion-version": headers["x-langfuse-ingestion-version"],
        "x-langfuse-sdk-name": headers["x-langfuse-sdk-name"],
        "x-langfuse-public-key": headers["x-langfuse-public-key"],
      },
      body: JSON.parse(JSON.stringify(body)),
    };
  });
}

describe("OTLP wire format", () => {
  it("sends the same requests as the Langfuse-SDK-based exporter (masked, full and none capture)", async () => {
    const got = {
      masked: normalised(await capture("masked")),
      full: normalised(await capture("full")),
      none: normalised(await capture("none")),
    };
    if (process.env.UPDATE_OTLP_GOLDEN === "1") writeFileSync(GOLDEN, `${JSON.stringify(got, null, 1)}\n`);
    const golden = JSON.parse(readFileSync(GOLDEN, "utf8"));
    expect(got.masked).toEqual(golden.masked);
    expect(got.full).toEqual(golden.full);
    expect(got.none).toEqual(golden.none);
  });

  it("sends the same requests from the trace thread (TRACE_EXPORT_THREAD=true)", async () => {
    const golden = JSON.parse(readFileSync(GOLDEN, "utf8"));
    expect(normalised(await capture("masked", "true"))).toEqual(golden.masked);
  });

  it("tags every span with Langfuse's environment and release when LANGFUSE_TRACING_ENVIRONMENT/LANGFUSE_RELEASE are set", async () => {
    const env = { LANGFUSE_TRACING_ENVIRONMENT: "staging", LANGFUSE_RELEASE: "v1.2.3" };
    for (const thread of ["false", "true"]) {
      const spans = (await capture("none", thread, env)).flatMap((r) =>
        r.body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)),
      );
      expect(spans.length).toBeGreaterThan(10);
      for (const span of spans) {
        const attributes = span.attributes as Array<{ key: string; value: { stringValue?: string } }>;
        const value = (key: string) => attributes.find((a) => a.key === key)?.value.stringValue;
        expect([span.name, value("langfuse.environment"), value("langfuse.release")]).toEqual([
          span.name,
          "staging",
          "v1.2.3",
        ]);
      }
    }
  });
});
