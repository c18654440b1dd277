/**
 * Micro-benchmark of the response cache's added work on a hit (`npx tsx bench/micro/response-cache-key.ts
 * [--calls 20000]`): the key of a typical chat request (a system prompt, a few turns, a tool; canonical JSON and
 * SHA-256, `response-cache/key.ts`), then the lookup of that entry in the in-process LRU and, when Redis answers
 * at REDIS_URL (default redis://127.0.0.1:6379), in Redis (one GET and the entry's JSON parse). Prints p50 / p99
 * µs per step for three rounds. Entries are written under a random prefix and deleted afterwards.
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { cacheKey } from "../../services/gateway/src/response-cache/key.js";
import { MemoryCacheStore } from "../../services/gateway/src/response-cache/store-memory.js";
import type { CachedAnswer } from "../../services/gateway/src/response-cache/types.js";

const { values: flags } = parseArgs({ options: { calls: { type: "string", default: "20000" } } });
const calls = Number(flags.calls);
const say = (line: string) => process.stdout.write(`${line}\n`);

const body = {
  model: "general",
  messages: [
    { role: "system", content: "You are a helpful assistant. ".repeat(20) },
    { role: "user", content: "What is the capital of France?" },
    { role: "assistant", content: "Paris." },
    { role: "user", content: "And of Italy?" },
  ],
  tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }],
  temperature: 0.2,
  max_tokens: 200,
};
const input = (i: number) => ({
  callType: "acompletion",
  modelGroup: "general",
  groupVersion: "0123456789abcdef",
  scope: `key:${"k".repeat(64)}`,
  namespace: "",
  body: { ...body, seed: i % 100 },
});
const entry: CachedAnswer = {
  v: 1,
  callType: "acompletion",
  answer: {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [
      { index: 0, message: { role: "assistant", content: "Rome. ".repeat(40) }, finish_reason: "stop" },
    ],
    usage: { prompt_tokens: 180, completion_tokens: 80, total_tokens: 260 },
  },
  usage: { prompt_tokens: 180, completion_tokens: 80, total_tokens: 260 },
  cost: 0.00042,
  model: "openai/m",
  deploymentId: "d",
  storedAt: Date.now(),
};
const json = JSON.stringify(entry);

function percentiles(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
  return `p50 ${at(0.5).toFixed(1)} µs, p99 ${at(0.99).toFixed(1)} µs`;
}

async function timed(step: (i: number) => unknown): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = process.hrtime.bigint();
    await step(i);
    samples.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  return samples;
}

const memory = new MemoryCacheStore(10_000, { now: () => Date.now() });
const keys = Array.from({ length: 100 }, (_, i) => cacheKey(input(i)));
for (const key of keys) await memory.set(key, json, 600);

const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", {
  lazyConnect: true,
  maxRetriesPerRequest: 0,
});
redis.on("error", () => {});
const prefix = `bench:rc:${randomBytes(4).toString("hex")}:`;
const haveRedis = await redis.connect().then(
  () => true,
  () => false,
);
if (haveRedis) for (const key of keys) await redis.set(prefix + key, json, "EX", 600);

say(`response cache, ${calls} calls per round; entry ${json.length} bytes of JSON`);
for (let round = 1; round <= 3; round++) {
  const key = await timed((i) => cacheKey(input(i)));
  const local = await timed((i) => memory.get(keys[i % 100] ?? ""));
  let line = `round ${round}: key ${percentiles(key)} | local lookup ${percentiles(local)}`;
  if (haveRedis) {
    const remote = await timed(async (i) => {
      const text = await redis.get(prefix + (keys[i % 100] ?? ""));
      return text === null ? undefined : JSON.parse(text);
    });
    line += ` | Redis lookup ${percentiles(remote)}`;
  }
  say(line);
}
if (haveRedis) {
  await redis.del(...keys.map((k) => prefix + k));
  redis.disconnect();
}
