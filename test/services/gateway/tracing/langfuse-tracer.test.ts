/**
 * The tracer against the Langfuse contract fake: what one call's trace carries, the capture modes, and the
 * bounded queue while Langfuse is down.
 */
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import {
  readTraceSettings,
  type TraceSettings,
} from "../../../../services/gateway/src/config/trace-settings.js";
import type { CallTrace } from "../../../../services/gateway/src/tracing/call-trace.js";
import { traceIdFor } from "../../../../services/gateway/src/tracing/call-trace.js";
import {
  type CallTracer,
  createLangfuseTracer,
} from "../../../../services/gateway/src/tracing/langfuse-tracer.js";
import { startFakeLangfuse } from "../../../fixtures/langfuse.js";
import { metricValue } from "../../../helpers/metrics.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(env: Record<string, string> = {}) {
  const langfuse = await startFakeLangfuse();
  const settings = readTraceSettings({
    TRACE_HOST: langfuse.url,
    TRACE_PUBLIC_KEY: langfuse.publicKey,
    TRACE_SECRET_KEY: langfuse.secretKey,
    TRACE_FLUSH_INTERVAL_MS: "50",
    TRACE_EXPORT_TIMEOUT_MS: "1000",
    ...env,
  }) as TraceSettings;
  const registry = new Registry();
  const tracer = createLangfuseTracer(settings, { registry, log: pino({ level: "silent" }) });
  cleanups.push(async () => {
    await tracer.shutdown(500);
    await langfuse.close();
  });
  return { langfuse, tracer, registry };
}

let seq = 0;
function call(overrides: Partial<CallTrace> = {}): CallTrace {
  seq += 1;
  const requestId = `00000000-0000-4000-8000-${String(seq).padStart(12, "0")}`;
  const start = Date.now() - 200;
  return {
    name: "chat.completions",
    operation: "chat",
    traceId: traceIdFor(requestId),
    requestId,
    startTime: start,
    endTime: start + 150,
    userId: "alice",
    keyAlias: "alice-app",
    sessionId: "conv-1",
    tags: ["general"],
    requestedModel: "general",
    model: "openai/gpt-4o-mini",
    deploymentId: "dep-1",
    modelParameters: { temperature: 0.2, max_tokens: 64 },
    stream: false,
    input: {
      original: [{ role: "user", content: "mail me at bob@example.com" }],
      sent: [{ role: "user", content: "mail me at <EMAIL_ADDRESS>" }],
    },
    output: { upstream: "ok bob@example.com", returned: "ok <EMAIL_ADDRESS>" },
    usage: { input: 12, output: 3, total: 15 },
    costUsd: 0.0000123,
    completionStartTime: start + 40,
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
    ],
    ...overrides,
  };
}

describe("Langfuse tracer", () => {
  it("serialises a call's captured input once, though the root span and the generation both carry it", async () => {
    const { tracer } = await setup();
    const traced = call();
    const sent = traced.input.sent;
    const stringify = JSON.stringify;
    let serialised = 0;
    JSON.stringify = ((...args: Parameters<typeof stringify>) => {
      if (args[0] === sent) serialised += 1;
      return stringify(...args);
    }) as typeof JSON.stringify;
    try {
      tracer.record(traced);
    } finally {
      JSON.stringify = stringify;
    }
    expect(serialised).toBe(1);
  });

  it("sends one trace per call: root span with user, session, tags; a generation with model, usage, cost, TTFT; a guardrail observation", async () => {
    const { langfuse, tracer } = await setup();
    const c = call();
    tracer.record(c);
    const obs = await langfuse.waitForTrace(c.traceId, 3);
    const root = obs.find((o) => o.parentObservationId === null);
    const generation = obs.find((o) => o.type === "GENERATION");
    const guardrail = obs.find((o) => o.type === "GUARDRAIL");
    expect(root).toMatchObject({
      name: "chat.completions",
      userId: "alice",
      sessionId: "conv-1",
      tags: ["general"],
    });
    expect(root?.traceName).toBe("chat.completions");
    expect(root?.metadata).toMatchObject({
      key_alias: "alice-app",
      request_id: c.requestId,
      model_id: "dep-1",
    });
    expect(generation).toMatchObject({
      providedModelName: "openai/gpt-4o-mini",
      usageDetails: { input: 12, output: 3, total: 15 },
      costDetails: { total: 0.0000123 },
      totalCost: 0.0000123,
      parentObservationId: root?.id,
      level: "DEFAULT",
    });
    expect(generation?.modelParameters).toEqual({ temperature: 0.2, max_tokens: 64 });
    expect(generation?.timeToFirstToken).toBeCloseTo(0.04, 2);
    expect(guardrail).toMatchObject({ name: "guardrail pii", parentObservationId: root?.id });
    expect(guardrail?.output).toMatchObject({ action: "mask", entities: ["EMAIL_ADDRESS"] });
    // Langfuse v4 real-time ingestion header.
    expect(langfuse.ingestions[0]?.["x-langfuse-ingestion-version"]).toBe("4");
  });

  it("captures the masked text by default, the original with TRACE_CAPTURE_CONTENT=full, nothing with none", async () => {
    for (const [mode, input, output] of [
      ["masked", "<EMAIL_ADDRESS>", "ok <EMAIL_ADDRESS>"],
      ["full", "bob@example.com", "ok bob@example.com"],
    ] as const) {
      const { langfuse, tracer } = await setup({ TRACE_CAPTURE_CONTENT: mode });
      const c = call();
      tracer.record(c);
      const generation = (await langfuse.waitForTrace(c.traceId, 3)).find((o) => o.type === "GENERATION");
      expect(JSON.stringify(generation?.input)).toContain(input);
      expect(generation?.output).toBe(output);
    }
    const { langfuse, tracer } = await setup({ TRACE_CAPTURE_CONTENT: "none" });
    const c = call();
    tracer.record(c);
    const obs = await langfuse.waitForTrace(c.traceId, 3);
    for (const o of obs.filter((x) => x.type !== "GUARDRAIL")) {
      expect(o.input).toBeNull();
      expect(o.output).toBeNull();
    }
  });

  it("marks failures: level ERROR with the message for 5xx, WARNING for refusals", async () => {
    const { langfuse, tracer } = await setup();
    const failed = call({
      status: 502,
      errorType: "upstream_error",
      errorMessage: "upstream answered 500",
      usage: undefined,
    });
    const refused = call({
      status: 400,
      errorType: "guardrail_blocked",
      output: undefined,
      model: undefined,
    });
    tracer.record(failed);
    tracer.record(refused);
    const gen = (await langfuse.waitForTrace(failed.traceId, 3)).find((o) => o.type === "GENERATION");
    expect(gen).toMatchObject({ level: "ERROR", statusMessage: "upstream answered 500" });
    const gen2 = (await langfuse.waitForTrace(refused.traceId, 3)).find((o) => o.type === "GENERATION");
    expect(gen2?.level).toBe("WARNING");
    expect(gen2?.providedModelName).toBe("general");
  });

  it.each(["false", "true"])(
    "while Langfuse is down keeps at most TRACE_MAX_QUEUE_SPANS, drops the oldest with a counter, and delivers the rest when it is back (TRACE_EXPORT_THREAD=%s)",
    async (thread) => {
      const { langfuse, tracer, registry } = await setup({
        TRACE_MAX_QUEUE_SPANS: "30",
        TRACE_EXPORT_THREAD: thread,
      });
      langfuse.setState("down");
      const calls = Array.from({ length: 40 }, () => call({ guardrails: [] })); // 2 spans each: 80 spans
      for (const c of calls) tracer.record(c);
      // A generous wait: the trace thread, if any, starts (and from source compiles) first.
      await expect
        .poll(() => metricValue(registry, "gateway_trace_dropped_total"), { timeout: 10_000 })
        .toBeGreaterThanOrEqual(50);
      expect(await metricValue(registry, "gateway_trace_queue_spans")).toBeLessThanOrEqual(30);
      await expect
        .poll(() => metricValue(registry, "gateway_trace_export_failures_total"), { timeout: 10_000 })
        .toBeGreaterThan(0);
      langfuse.setState("up");
      await tracer.flush();
      await expect.poll(() => langfuse.observations.length, { timeout: 10_000 }).toBe(30);
      // The newest calls survived, the oldest were dropped.
      const delivered = new Set(langfuse.observations.map((o) => o.traceId));
      expect(delivered.has(calls[39]?.traceId as string)).toBe(true);
      expect(delivered.has(calls[0]?.traceId as string)).toBe(false);
    },
  );

  it("gives up on an export Langfuse never answers after TRACE_EXPORT_TIMEOUT_MS, keeps the spans and sends them once it answers", async () => {
    const { langfuse, tracer, registry } = await setup({ TRACE_EXPORT_TIMEOUT_MS: "200" });
    langfuse.setState("hang");
    const c = call({ guardrails: [] });
    tracer.record(c);
    await expect.poll(() => metricValue(registry, "gateway_trace_export_failures_total")).toBeGreaterThan(0);
    expect(await metricValue(registry, "gateway_trace_queue_spans")).toBe(2);
    langfuse.setState("up");
    await tracer.flush();
    expect(await langfuse.waitForTrace(c.traceId, 2)).toHaveLength(2);
  });

  it("counts export failures for wrong keys (401) without throwing at the caller", async () => {
    const langfuse = await startFakeLangfuse();
    const registry = new Registry();
    const settings = readTraceSettings({
      TRACE_HOST: langfuse.url,
      TRACE_PUBLIC_KEY: "pk-wrong",
      TRACE_SECRET_KEY: "sk-wrong",
      TRACE_FLUSH_INTERVAL_MS: "20",
    }) as TraceSettings;
    const tracer: CallTracer = createLangfuseTracer(settings, { registry, log: pino({ level: "silent" }) });
    cleanups.push(async () => {
      await tracer.shutdown(200);
      await langfuse.close();
    });
    expect(() => tracer.record(call())).not.toThrow();
    await expect.poll(() => metricValue(registry, "gateway_trace_export_failures_total")).toBeGreaterThan(0);
    expect(langfuse.observations).toHaveLength(0);
  });

  it("shutdown flushes what is queued", async () => {
    const { langfuse, tracer } = await setup({ TRACE_FLUSH_INTERVAL_MS: "60000" });
    const c = call();
    tracer.record(c);
    expect(langfuse.observations).toHaveLength(0);
    await tracer.shutdown(2000);
    expect(langfuse.observations.filter((o) => o.traceId === c.traceId)).toHaveLength(3);
  });
});

describe("trace settings", () => {
  it("is off without a host and keys, accepts Langfuse's own names, refuses half a configuration", () => {
    expect(readTraceSettings({})).toBeUndefined();
    expect(
      readTraceSettings({
        LANGFUSE_BASE_URL: "http://lf:3000/",
        LANGFUSE_PUBLIC_KEY: "pk",
        LANGFUSE_SECRET_KEY: "sk",
      }),
    ).toMatchObject({ host: "http://lf:3000", publicKey: "pk", capture: "masked" });
    expect(() => readTraceSettings({ TRACE_HOST: "http://lf:3000" })).toThrow(
      /TRACE_PUBLIC_KEY, TRACE_SECRET_KEY not set/,
    );
    expect(() =>
      readTraceSettings({ TRACE_HOST: "lf", TRACE_PUBLIC_KEY: "a", TRACE_SECRET_KEY: "b" }),
    ).toThrow(/not a URL/);
    expect(() =>
      readTraceSettings({
        TRACE_HOST: "http://x",
        TRACE_PUBLIC_KEY: "a",
        TRACE_SECRET_KEY: "b",
        TRACE_CAPTURE_CONTENT: "some",
      }),
    ).toThrow(/TRACE_CAPTURE_CONTENT/);
  });

  it("a trace id is the request id's 32 hex digits", () => {
    expect(traceIdFor("5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b")).toBe("5f0c1a2b3c4d4e5f8a9b0c1d2e3f4a5b");
    expect(traceIdFor("not-a-uuid")).toMatch(/^[0-9a-f]{32}$/);
  });
});
