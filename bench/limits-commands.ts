/**
 * Redis commands per chat call through a real gateway with the full pipeline (a virtual key with rpm, tpm and
 * budget; a priced model, so every call reserves an estimate; Postgres spend), counted by Redis itself: `INFO commandstats` deltas over `--calls` calls on a private
 * redis-server (so no other client's commands count). With `--before <entry>`, a second gateway from another
 * checkout (e.g. the per-call round-trip code) runs the same calls on the same Redis, reported side by side.
 *
 *   npx tsx bench/limits-commands.ts [--calls 2000] [--concurrency 16] [--before /path/to/services/gateway/src/server.ts]
 *
 * Needs `redis-server` on the PATH and the local Postgres (`--postgres`, default postgres://postgres@127.0.0.1:5432/postgres).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Redis } from "ioredis";
import { readyLine, type Service, spawnGateway, spawnService } from "./lib/children.js";
import { type BenchDatabase, createBenchDatabase, generateVirtualKey } from "./lib/full-pipeline.js";
import { type PrivateRedis, startPrivateRedis } from "./lib/private-redis.js";

const { values: flags } = parseArgs({
  options: {
    calls: { type: "string", default: "2000" },
    concurrency: { type: "string", default: "16" },
    before: { type: "string" },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
  },
});
const calls = Number(flags.calls);
const concurrency = Number(flags.concurrency);
const masterKey = `sk-bench-master-${randomBytes(8).toString("hex")}`;
const say = (line: string) => process.stdout.write(`${line}\n`);
const services: Service[] = [];
const databases: BenchDatabase[] = [];

/** The benchmark's model `bench` at the fake upstream, priced, so that every call reserves a budget estimate. */
function pricedConfig(upstream: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "limits-commands-")), "gateway.yaml");
  const lines = [
    "model_list:",
    "  - model_name: bench",
    "    litellm_params:",
    "      model: openai/fake-model",
  ];
  lines.push(
    `      api_base: ${upstream}`,
    "      input_cost_per_token: 0.000001",
    "      output_cost_per_token: 0.000002",
    "",
  );
  writeFileSync(path, lines.join("\n"));
  return path;
}

/** Command name → calls, from `INFO commandstats`. */
async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const text = await redis.info("commandstats");
  const counts = new Map<string, number>();
  for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    counts.set(match[1]!, Number(match[2]));
  return counts;
}

async function run(
  label: string,
  entry: string | undefined,
  redisUrl: string,
  upstream: string,
  redis: Redis,
) {
  const database = await createBenchDatabase(String(flags.postgres), "limitscmd");
  databases.push(database);
  const { service, origin } = await spawnGateway(
    `gateway-${label}`,
    {
      GATEWAY_CONFIG: pricedConfig(upstream),
      GATEWAY_MASTER_KEY: masterKey,
      LOG_LEVEL: "warn",
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      GATEWAY_REDIS_KEY_PREFIX: `${label}:`,
    },
    entry === undefined ? {} : { entry },
  );
  services.push(service);
  const key = await generateVirtualKey(origin, masterKey);
  const body = JSON.stringify({
    model: "bench",
    messages: [{ role: "user", content: "hello" }],
    max_tokens: 16,
  });
  const send = async () => {
    const res = await fetch(`${origin}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body,
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${label}: a call answered ${res.status}`);
  };
  const loop = async (n: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < n) await send();
      }),
    );
  };
  await loop(200); // warm-up: key cache, JIT, first leases
  const before = await commandCalls(redis);
  await loop(calls);
  await service.stop(); // shutdown returns the leases: counted, so the figure includes every settle
  const after = await commandCalls(redis);
  const deltas = [...after]
    .map(([name, n]) => [name, n - (before.get(name) ?? 0)] as const)
    .filter(([name, n]) => n > 0 && name !== "info");
  const total = deltas.reduce((sum, [, n]) => sum + n, 0);
  const detail = deltas.map(([name, n]) => `${name} ${(n / calls).toFixed(3)}`).join(", ");
  say(`${label}: ${(total / calls).toFixed(3)} Redis commands per call over ${calls} calls (${detail})`);
}

let privateRedis: PrivateRedis | undefined;
try {
  privateRedis = await startPrivateRedis();
  const { url: redisUrl, client: redis } = privateRedis;
  const upstreamService = spawnService("upstream", { entry: "bench/upstream.ts", env: { ...process.env } });
  services.push(upstreamService);
  const upstream = (await readyLine<{ ready: true; url: string; port: number }>(upstreamService)).url;
  say(
    `${calls} chat calls at concurrency ${concurrency}, virtual key with rpm, tpm and budget, private Redis`,
  );
  await run("after", undefined, redisUrl, upstream, redis);
  if (flags.before !== undefined) await run("before", flags.before, redisUrl, upstream, redis);
} finally {
  await Promise.all(services.map((service) => service.stop(2000)));
  await Promise.all(databases.map((database) => database.drop().catch(() => undefined)));
  privateRedis?.stop();
}
