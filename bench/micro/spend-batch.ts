/**
 * Micro-benchmark of writing spend rows (`npx tsx bench/micro/spend-batch.ts [--baseline <checkout>]
 * [--rows 20000] [--batches 500,100]`): `writeSpendBatch` into a fresh database on the local Postgres (migrated,
 * dropped at the end), one batch after another, rows shaped as the gateway records them (a virtual key, a
 * user). Writers: this checkout's `writeSpendBatch` on the event loop, the same through the spend writer thread
 * (`SpendWriterThread`, as the store writes), and with `--baseline` another checkout's `spend/write.ts` on the
 * same database. For each batch size and writer, in rotating order over three rounds: this process's CPU per
 * row (µs, every thread's; node-postgres serialising the batch, reading the answers), the event loop thread's
 * own CPU per row and per batch (µs, ms; from /proc/thread-self/schedstat, so other processes on a loaded
 * machine do not lengthen it: the part a gateway's calls compete with; the writer thread spreads its share over
 * one event-loop turn per 50 rows, the event-loop writer over a few turns per batch) and the event loop's delay
 * (p99 and longest, ms, `monitorEventLoopDelay` at 1 ms resolution, wall time).
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { migrate } from "../../services/gateway/src/db/migrate.js";
import { createPool } from "../../services/gateway/src/db/pool.js";
import { SpendWriterThread } from "../../services/gateway/src/spend/thread-writer.js";
import type { SpendLogRow } from "../../services/gateway/src/spend/types.js";
import { writeSpendBatch } from "../../services/gateway/src/spend/write.js";
import { createBenchDatabase } from "../lib/full-pipeline.js";
import { silentLogger } from "../lib/private-redis.js";
import { median } from "../lib/stats.js";

type Write = typeof writeSpendBatch;

const { values } = parseArgs({
  options: {
    baseline: { type: "string" },
    rows: { type: "string", default: "20000" },
    batches: { type: "string", default: "500,100" },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
  },
});
const totalRows = Number(values.rows);
const batchSizes = String(values.batches).split(",").map(Number);

const writers = new Map<string, Write>([["event loop", writeSpendBatch]]);
if (values.baseline !== undefined) {
  const before = (await import(`${values.baseline}/services/gateway/src/spend/write.ts`)) as {
    writeSpendBatch: Write;
  };
  writers.set("baseline", before.writeSpendBatch);
}

/** On-CPU time of the calling thread, ns (Linux: the first field of /proc/thread-self/schedstat). */
function threadCpuNs(): number {
  return Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0]);
}

const database = await createBenchDatabase(String(values.postgres), "spendbatch");
const pool = createPool(database.url, silentLogger);
const thread = new SpendWriterThread(database.url, silentLogger);
writers.set("writer thread", (_pool, rows, now) => thread.write(rows, now));
try {
  await migrate(pool, silentLogger);
  await thread.write([], Date.now()); // starts the thread (and compiles it, under tsx) before the rounds
  const keyHash = "ab".repeat(32);
  await pool.query("INSERT INTO users (user_id) VALUES ('bench-user')");
  await pool.query(
    "INSERT INTO keys (token, key_name, key_alias, user_id) VALUES ($1, 'sk-...bench', 'bench', 'bench-user')",
    [keyHash],
  );
  const row = (): SpendLogRow => {
    const now = Date.now();
    return {
      requestId: randomUUID(),
      keyHash,
      keyAlias: "bench",
      userId: "bench-user",
      modelGroup: "bench",
      model: "openai/fake-model",
      deploymentId: "bench-0",
      promptTokens: 12,
      completionTokens: 34,
      totalTokens: 46,
      spend: 0.0000123,
      startTime: now - 1,
      endTime: now,
      status: 200,
      stream: false,
      callType: "acompletion",
    };
  };
  const results = new Map<string, { cpuUs: number[]; mainUs: number[]; p99Ms: number[]; maxMs: number[] }>();
  const names = [...writers.keys()];
  const batchesOf = (size: number) =>
    Array.from({ length: Math.ceil(totalRows / size) }, () => Array.from({ length: size }, row));
  for (let round = 0; round < 3; round++) {
    for (const size of batchSizes) {
      for (const name of round % 2 === 0 ? names : [...names].reverse()) {
        const write = writers.get(name)!;
        const batches = batchesOf(size);
        const delay = monitorEventLoopDelay({ resolution: 1 });
        delay.enable();
        const cpu = process.cpuUsage();
        const main = threadCpuNs();
        for (const batch of batches) await write(pool, batch, Date.now());
        const mainNs = threadCpuNs() - main;
        const used = process.cpuUsage(cpu);
        delay.disable();
        const key = `${name} ${size}`;
        const entry = results.get(key) ?? { cpuUs: [], mainUs: [], p99Ms: [], maxMs: [] };
        results.set(key, entry);
        const rows = batches.length * size;
        entry.cpuUs.push((used.user + used.system) / rows);
        entry.mainUs.push(mainNs / 1000 / rows);
        entry.p99Ms.push(delay.percentile(99) / 1e6);
        entry.maxMs.push(delay.max / 1e6);
      }
    }
  }
  process.stdout.write(
    `\n${totalRows} rows per run, 3 rounds, medians\n\n| writer | rows per batch | CPU per row (all threads) | event-loop thread CPU per row | per batch | event-loop delay p99 | longest |\n| --- | --- | --- | --- | --- | --- | --- |\n`,
  );
  for (const size of batchSizes) {
    for (const name of names) {
      const r = results.get(`${name} ${size}`)!;
      process.stdout.write(
        `| ${name} | ${size} | ${median(r.cpuUs).toFixed(1)} µs | ${median(r.mainUs).toFixed(1)} µs | ${((median(r.mainUs) * size) / 1000).toFixed(2)} ms | ${median(r.p99Ms).toFixed(1)} ms | ${median(r.maxMs).toFixed(1)} ms |\n`,
      );
    }
  }
} finally {
  await thread.close();
  await pool.end();
  await database.drop();
}
