/**
 * Micro-benchmark of turning one finished call into its trace spans (`npx tsx bench/micro/trace-record.ts
 * [--baseline <checkout>]`): `CallTracer.record` of `services/gateway/src/tracing/langfuse-tracer.ts` for 3,000
 * calls whose input is 20 messages (~10 KB of JSON) and whose answer is 600 characters, with an exporter that
 * accepts every batch at once (no network; the batches are sent only at shutdown). This is the event-loop work
 * a traced call costs after its response. Three rounds, rotating with `--baseline`'s (another checkout's)
 * tracer; prints µs per record.
 */
import { parseArgs } from "node:util";
import { pino } from "pino";
import { Registry } from "prom-client";
import { repoRoot } from "../lib/children.js";

const { values } = parseArgs({ options: { baseline: { type: "string" } } });
const checkouts = [repoRoot.replace(/\/$/, ""), ...(values.baseline === undefined ? [] : [values.baseline])];
const CALLS = 3000;
const input = Array.from({ length: 20 }, (_, i) => ({ role: "user", content: `message ${i} `.repeat(40) }));
const exporter = {
  export: (_spans: unknown, done: (result: { code: number }) => void) => done({ code: 0 }),
  shutdown: async () => {},
  forceFlush: async () => {},
};

for (let round = 0; round < 3; round++) {
  for (const dir of round % 2 === 0 ? checkouts : [...checkouts].reverse()) {
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
    });
    const tracer = createLangfuseTracer(settings, {
      registry: new Registry(),
      log: pino({ level: "silent" }),
      exporter,
    });
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
    const us = ((performance.now() - began) * 1000) / CALLS;
    console.log(
      `round ${round + 1} ${dir === checkouts[0] ? "this checkout" : "baseline"}: ${us.toFixed(1)} µs per record`,
    );
    await tracer.shutdown(10);
  }
}
process.exit(0);
