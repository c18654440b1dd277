/**
 * Micro-benchmark of the spend spool (`npx tsx --conditions=development bench/micro/spool.ts`): the same spend
 * rows recorded at a steady rate by a {@link BatchingSpendRecorder} without a spool and with one (a real
 * {@link SpendSpool} in a temp folder: an fsync'd append every 50 ms), side by side, three rounds each. Postgres
 * is out of the picture (its writer never runs), so what differs is the spool alone. Prints, per row: the time
 * `record()` takes on the request path (µs) and the event-loop time the gateway spends on the row in all (µs,
 * from `eventLoopUtilization`, spool appends included); and the spool's append-and-fsync time (p50, p99 ms),
 * which with the 50 ms interval bounds how long a recorded row is in memory alone.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pino from "pino";
import { Registry } from "prom-client";
import { BatchingSpendRecorder } from "../../services/gateway/src/spend/recorder.js";
import { SpendSpool } from "../../services/gateway/src/spend/spool.js";
import type { SpendLogRow } from "../../services/gateway/src/spend/types.js";

const RATE = 2000; // rows per second
const SECONDS = 3;
const log = pino({ level: "silent" });

function row(i: number): SpendLogRow {
  const now = Date.now();
  return {
    requestId: `req-${i}-${now}`,
    keyHash: "k".repeat(64),
    keyAlias: "ci",
    userId: "u1",
    modelGroup: "general",
    model: "openai/gpt-4o-mini",
    deploymentId: "d1",
    promptTokens: 12,
    completionTokens: 5,
    totalTokens: 17,
    spend: 0.0000034,
    startTime: now - 200,
    endTime: now,
    status: 200,
    stream: false,
  };
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

async function round(withSpool: boolean) {
  const dir = mkdtempSync(join(tmpdir(), "bench-spool-"));
  const spool = withSpool ? new SpendSpool(dir, log) : undefined;
  const appendMs: number[] = [];
  if (spool !== undefined) {
    const append = spool.append.bind(spool);
    spool.append = async (segment, rows) => {
      const started = performance.now();
      await append(segment, rows);
      appendMs.push(performance.now() - started);
    };
  }
  const recorder = new BatchingSpendRecorder({
    pool: {} as never, // never used: the Postgres writer's interval is longer than the run
    clock: { now: () => Date.now() },
    log,
    registry: new Registry(),
    flushIntervalMs: 3_600_000,
    ...(spool === undefined ? {} : { spool }),
  });
  recorder.start();
  const perTick = RATE / 100;
  let recordNs = 0n;
  let recorded = 0;
  const elu = performance.eventLoopUtilization();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      for (let i = 0; i < perTick; i++) {
        const r = row(recorded);
        const t = process.hrtime.bigint();
        recorder.record(r);
        recordNs += process.hrtime.bigint() - t;
        recorded++;
      }
      if (recorded >= RATE * SECONDS) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  await new Promise((r) => setTimeout(r, 200)); // the last append
  const busy = performance.eventLoopUtilization(elu);
  recorder.stop();
  await spool?.settled();
  rmSync(dir, { recursive: true, force: true });
  appendMs.sort((a, b) => a - b);
  return {
    recordUs: Number(recordNs) / 1000 / recorded,
    loopUs: (busy.active * 1000) / recorded,
    appendP50: quantile(appendMs, 0.5),
    appendP99: quantile(appendMs, 0.99),
    appends: appendMs.length,
  };
}

console.log(`${RATE} rows/s for ${SECONDS} s per round`);
console.log("round | spool | record() µs/row | event loop µs/row | appends | append+fsync p50 / p99 ms");
for (let r = 1; r <= 3; r++) {
  for (const withSpool of [false, true]) {
    const m = await round(withSpool);
    const fsync = withSpool ? `${m.appendP50.toFixed(2)} / ${m.appendP99.toFixed(2)}` : "-";
    console.log(
      `${r} | ${withSpool ? "on " : "off"} | ${m.recordUs.toFixed(3)} | ${m.loopUs.toFixed(2)} | ${m.appends} | ${fsync}`,
    );
  }
}
