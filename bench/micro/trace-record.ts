/**
 * Micro-benchmark of turning one finished call into its trace (`npx tsx bench/micro/trace-record.ts
 * [--baseline <checkout>]`): `CallTracer.record` of `services/gateway/src/tracing/langfuse-tracer.ts` for 3,000
 * calls whose input is 20 messages (~10 KB of JSON) and whose answer is 600 characters, then `flush()`, which
 * builds every batch's OTLP/HTTP JSON request body and hands it to a sender that accepts it at once (no network).
 * Record plus flush is the event-loop work a traced call costs after its response. A checkout whose tracer
 * takes an OpenTelemetry `SpanExporter` (`deps.exporter`, before the direct OTLP build) gets one that serialises
 * each batch with the OTLP exporter's own JSON serialiser; a newer one gets `deps.send`. Three rounds, rotating
 * with `--baseline`'s (another checkout's) tracer and, with `--thread`, this checkout's tracer exporting from
 * its trace thread (TRACE_EXPORT_THREAD=true; its sends go to a closed port, the loop's share is what counts);
 * prints µs per call for record, flush, both, and the event loop's busy time (eventLoopUtilization); run with
 * `node --expose-gc --import tsx` it also prints the heap a queued call holds (the thread's heap is not counted).
 */
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import { pino } from "pino";
import { Registry } from "prom-client";
import { repoRoot } from "../lib/children.js";

const { values } = parseArgs({ options: { baseline: { type: "string" }, thread: { type: "boolean" } } });
const here = repoRoot.replace(/\/$/, "");
/** Runs: a checkout, and whether its tracer exports from the trace thread (`--thread`: this checkout's, once more). */
const runs = [
  { dir: here, thread: false },
  ...(values.thread ? [{ dir: here, thread: true }] : []),
  ...(values.baseline === undefined ? [] : [{ dir: values.baseline, thread: false }]),
];
const CALLS = 3000;
const input = Array.from({ length: 20 }, (_, i) => ({ role: "user", content: `message ${i} `.repeat(40) }));
let bodyChars = 0;
/** The OTLP exporter's JSON serialiser, for checkouts that still export SDK spans. */
const require = createRequire(
  createRequire(import.meta.url).resolve("@opentelemetry/exporter-trace-otlp-http"),
);
const { JsonTraceSerializer } = require("@opentelemetry/otlp-transformer") as {
  JsonTraceSerializer: { serializeRequest(spans: unknown[]): Uint8Array | undefined };
};
const exporter = {
  export: (spans: unknown[], done: (result: { code: number }) => void) => {
    bodyChars += JsonTraceSerializer.serializeRequest(spans)?.length ?? 0;
    done({ code: 0 });
  },
  shutdown: async () => {},
  forceFlush: async () => {},
};
const send = async (body: string) => {
  bodyChars += Buffer.byteLength(body);
};

for (let round = 0; round < 3; round++) {
  for (const { dir, thread } of round % 2 === 0 ? runs : [...runs].reverse()) {
    const { createLangfuseTracer } = await import(`${dir}/services/gateway/src/tracing/langfuse-tracer.ts`);
    // config/trace-settings.ts since the layering change; tracing/settings.ts in older checkouts.
    const { readTraceSettings } = await import(`${dir}/services/gateway/src/config/trace-settings.ts`).catch(
      () => import(`${dir}/services/gateway/src/tracing/settings.ts`),
    );
    const settings = readTraceSettings({
      TRACE_HOST: "http://127.0.0.1:9",
      TRACE_PUBLIC_KEY: "pk-bench",
      TRACE_SECRET_KEY: "sk-bench",
      TRACE_FLUSH_INTERVAL_MS: "600000",
      // Room for every span of the run: nothing is dropped before the flush.
      TRACE_MAX_QUEUE_SPANS: String(CALLS * 2),
      TRACE_MAX_QUEUE_MB: "1024",
      TRACE_EXPORT_THREAD: String(thread),
    });
    const tracer = createLangfuseTracer(settings, {
      registry: new Registry(),
      log: pino({ level: "silent" }),
      exporter,
      // The thread posts to TRACE_HOST itself (a closed port here: the loop's share is what is measured).
      ...(thread ? {} : { send }),
    });
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const elu = performance.eventLoopUtilization();
    const began = performance.now();
    for (let i = 0; i < CALLS; i++) {
      const requestId = `00000000-0000-4000-8000-${String(i + 1).padStart(12, "0")}`;
      const now = Date.now();
      tracer.record({
        name: "chat.completions",
        operation: "chat",
        traceId: requestId.replaceAll("-", ""),
        requestId,
        startTime: now - 10,
        endTime: now,
        tags: ["general"],
        requestedModel: "general",
        model: "openai/fake-model",
        deploymentId: "dep-1",
        modelParameters: {},
        stream: false,
        input: { original: input, sent: input },
        output: { returned: "ok ".repeat(200) },
        status: 200,
        guardrails: [],
      });
    }
    const recorded = performance.now();
    gc?.();
    const heldKiB = (process.memoryUsage().heapUsed - heapBefore) / 1024 / CALLS;
    bodyChars = 0;
    await tracer.flush();
    const flushed = performance.now();
    const active = performance.eventLoopUtilization(elu).active;
    const us = (ms: number) => ((ms * 1000) / CALLS).toFixed(1);
    const name = dir === here ? (thread ? "this checkout, thread" : "this checkout") : "baseline";
    console.log(
      `round ${round + 1} ${name}: ${us(recorded - began)} µs record + ${us(flushed - recorded)} µs flush = ${us(flushed - began)} µs per call; event loop busy ${us(active)} µs per call (${(bodyChars / CALLS / 1024).toFixed(1)} KiB of OTLP JSON per call on the loop${gc ? `; ${heldKiB.toFixed(1)} KiB of this heap per queued call` : ""})`,
    );
    await tracer.shutdown(10);
  }
}
process.exit(0);
