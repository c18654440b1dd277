/**
 * `npx tsx bench/auth-flood.ts [--seconds 10] [--rate 1000] [--flooders 64]`: a valid key's latency while one
 * client (its own process) floods the gateway with `rate` distinct bogus `sk-…` keys a second (at most
 * `flooders` in flight), side by side in one run: a gateway with the per-address failure
 * limit (GATEWAY_AUTH_FAILURE_LIMIT=20, the default) and one without it (0: every bogus key is a database
 * lookup, as before the limit). Both are child processes on one fresh database and this machine's Redis.
 * For each: the valid key's p50/p99 on `GET /v1/models` (authentication only, no upstream) when quiet and during
 * the flood, the flood's answers, and the database transactions the flood caused (pg_stat_database).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { type Service, spawnGateway } from "./lib/children.js";
import { createBenchDatabase, generateVirtualKey } from "./lib/full-pipeline.js";
import { summarize } from "./lib/stats.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    flooders: { type: "string", default: "64" },
    rate: { type: "string", default: "1000" },
  },
});
const seconds = Number(values.seconds);
const flooders = Number(values.flooders);
const rate = Number(values.rate);
const adminUrl = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const masterKey = `sk-bench-master-${process.pid}-${Date.now()}`;

/** Sequential GETs with `key` for `ms`; latencies in ms. */
async function probe(origin: string, key: string, ms: number): Promise<number[]> {
  const samples: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const started = performance.now();
    const res = await fetch(`${origin}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`valid key answered ${res.status}`);
    samples.push(performance.now() - started);
  }
  return samples;
}

/**
 * The flood, in its own process (so that it does not share this process's event loop with the probe):
 * `rate` requests per second with distinct bogus keys, at most `flooders` in flight, until stdin closes; it
 * then prints its answers by status as JSON.
 */
const FLOODER = `
const { randomBytes } = await import("node:crypto");
const [origin, rate, inFlightMax] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
const statuses = {};
let inFlight = 0;
let stop = false;
process.stdin.on("end", () => { stop = true; });
process.stdin.resume();
const fire = async () => {
  if (inFlight >= inFlightMax) { statuses.skipped = (statuses.skipped ?? 0) + 1; return; }
  inFlight += 1;
  const bogus = "sk-" + randomBytes(30).toString("base64url").slice(0, 40);
  try {
    const res = await fetch(origin + "/v1/models", { headers: { authorization: "Bearer " + bogus } });
    await res.arrayBuffer();
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  } catch { statuses.error = (statuses.error ?? 0) + 1; }
  inFlight -= 1;
};
const perTick = rate / 100;
let owed = 0;
const timer = setInterval(() => {
  owed += perTick;
  for (; owed >= 1; owed -= 1) void fire();
  if (stop) { clearInterval(timer); setTimeout(() => { process.stdout.write(JSON.stringify(statuses)); process.exit(0); }, 500); }
}, 10);
`;

/** Starts the flood against `origin`; `stop()` ends it and resolves with its answers by status. */
function startFlood(origin: string): { stop(): Promise<string> } {
  const child = spawn(
    process.execPath,
    ["--input-type=module", "-e", FLOODER, origin, String(rate), String(flooders)],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  let out = "";
  child.stdout.on("data", (chunk) => {
    out += String(chunk);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    async stop() {
      child.stdin.end();
      await exited;
      const statuses = JSON.parse(out || "{}") as Record<string, number>;
      return Object.entries(statuses)
        .map(([s, n]) => `${n} × ${s}`)
        .join(", ");
    },
  };
}

async function transactions(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query(
      "SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()",
    );
    return Number(result.rows[0].n);
  } finally {
    await client.end();
  }
}

const fmt = (n: number) => n.toFixed(2);

async function main(): Promise<void> {
  const db = await createBenchDatabase(adminUrl, "authflood");
  const config = join(mkdtempSync(join(tmpdir(), "auth-flood-")), "config.yaml");
  writeFileSync(config, "model_list: []\n");
  const services: Service[] = [];
  try {
    const gateways: Array<{ name: string; origin: string }> = [];
    for (const [name, limit] of [
      ["with the failure limit (20/min)", "20"],
      ["without it (limit 0)", "0"],
    ] as const) {
      const { service, origin } = await spawnGateway(name, {
        GATEWAY_CONFIG: config,
        GATEWAY_MASTER_KEY: masterKey,
        DATABASE_URL: db.url,
        REDIS_URL: redisUrl,
        GATEWAY_REDIS_KEY_PREFIX: `authflood:${process.pid}:${limit}:`,
        GATEWAY_AUTH_FAILURE_LIMIT: limit,
        GATEWAY_SPOOL_DIR: mkdtempSync(join(tmpdir(), "auth-flood-spool-")),
        LOG_LEVEL: "warn",
      });
      services.push(service);
      gateways.push({ name, origin });
    }
    const lines: string[] = [];
    // One gateway after the other, each quiet then flooded, in the same run on the same machine.
    const results = new Map<string, { quiet: number[]; flooded: number[]; statuses: string; txs: number }>();
    for (const g of gateways) {
      const key = await generateVirtualKey(g.origin, masterKey);
      const quiet = await probe(g.origin, key, seconds * 1000);
      const before = await transactions(db.url);
      const flooding = startFlood(g.origin);
      const flooded = await probe(g.origin, key, seconds * 1000);
      const statuses = await flooding.stop();
      const txs = (await transactions(db.url)) - before;
      results.set(g.name, { quiet, flooded, txs, statuses });
    }
    lines.push(
      `valid key on GET /v1/models, ${seconds} s each; flood: ${rate} bogus keys/s, at most ${flooders} in flight:`,
    );
    lines.push(
      "| gateway | p50 quiet (ms) | p50 flood (ms) | ratio | p99 quiet | p99 flood | flood answers | DB transactions during flood |",
    );
    lines.push("|---|---|---|---|---|---|---|---|");
    for (const [name, r] of results) {
      const q = summarize(r.quiet);
      const f = summarize(r.flooded);
      lines.push(
        `| ${name} | ${fmt(q.p50)} | ${fmt(f.p50)} | ${fmt(f.p50 / q.p50)}× | ${fmt(q.p99)} | ${fmt(f.p99)} | ${r.statuses} | ${r.txs} |`,
      );
    }
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    for (const service of services) await service.stop(2000);
    await db.drop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`auth-flood: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
