/**
 * Micro-benchmark of writing spend rows (`npx tsx bench/micro/spend-batch.ts [--baseline <checkout>]
 * [--rows 20000] [--batches 500,100]`): `writeSpendBatch` into a fresh database on the local Postgres (migrated,
 * dropped at the end), one batch after another, rows shaped as the gateway records them (a virtual key, a
 * user). For each batch size and each checkout (this one and, with `--baseline`, another one's `spend/write.ts`
 * on the same database), in rotating order over three rounds: this process's CPU per row (µs; node-postgres
 * serialising the batch, reading the answers) and the event loop's delay (p99 and longest, ms, from
 * `monitorEventLoopDelay` at 1 ms resolution): a gateway answering calls meanwhile makes them wait that long.
 */
import { randomUUID } from "node:crypto";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { migrate } from "../../services/gateway/src/db/migrate.js";
import { createPool } from "../../services/gateway/src/db/pool.js";
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

const writers = new Map<string, Write>([["this checkout", writeSpendBatch]]);
if (values.baseline !== undefined) {
  const before = (await import(`${values.baseline}/services/gateway/src/spend/write.ts`)) as {
    writeSpendBatch: Write;
  };
  writers.set("baseline", before.writeSpendBatch);
}

const database = await createBenchDatabase(String(values.postgres), "spendbatch");
const pool = createPool(database.url, silentLogger);
try {
  await migrate(pool, silentLogger);
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
  const results = new Map<string, { cpuUs: number[]; blockedMs: number[]; p99Ms: number[] }>();
  const names = [...writers.keys()];
  for (let round = 0; round < 3; round++) {
    for (const size of batchSizes) {
      for (const name of round % 2 === 0 ? names : [...names].reverse()) {
        const write = writers.get(name)!;
        const batches = Array.from({ length: Math.ceil(totalRows / size) }, () =>
          Array.from({ length: size }, row),
        );
        const delay = monitorEventLoopDelay({ resolution: 1 });
        delay.enable();
        const cpu = process.cpuUsage();
        for (const batch of batches) await write(pool, batch, Date.now());
        const used = process.cpuUsage(cpu);
        delay.disable();
        const key = `${name} ${size}`;
        const entry = results.get(key) ?? { cpuUs: [], blockedMs: [], p99Ms: [] };
        results.set(key, entry);
        entry.cpuUs.push((used.user + used.system) / (batches.length * size));
        entry.blockedMs.push(delay.max / 1e6);
        entry.p99Ms.push(delay.percentile(99) / 1e6);
      }
    }
  }
  process.stdout.write(
    `\n${totalRows} rows per run, 3 rounds, medians\n\n| writer | rows per batch | CPU per row | event-loop delay p99 | longest |\n| --- | --- | --- | --- | --- |\n`,
  );
  for (const size of batchSizes) {
    for (const name of names) {
      const r = results.get(`${name} ${size}`)!;
      process.stdout.write(
        `| ${name} | ${size} | ${median(r.cpuUs).toFixed(1)} µs | ${median(r.p99Ms).toFixed(1)} ms | ${median(r.blockedMs).toFixed(1)} ms |\n`,
      );
    }
  }
} finally {
  await pool.end();
  await database.drop();
}
