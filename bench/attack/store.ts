/**
 * `npx tsx bench/attack/store.ts <scenario>`: re-measures the store's hardening against a real gateway on this
 * machine's Postgres and Redis (fresh database, dropped at the end; a unique Redis key prefix).
 *
 *   spool       gateway process on a Postgres reached through a TCP proxy; the proxy is cut, N calls are
 *               made, the gateway gets SIGTERM, Postgres comes back, the gateway starts again: how many spend
 *               rows are in Postgres (and how many distinct request ids) versus calls answered.
 *   revoke      two gateways sharing Redis; B cut off from Postgres; a key (cached on B) is revoked on A:
 *               how long until B refuses it, and how many calls B still answered meanwhile.
 *   hang        gateway whose Postgres hangs (the proxy holds every packet); a key used before: the slowest
 *               of 50 calls made over the next seconds, and what an unknown key gets.
 *   slow-body   gateway process with the default client timeouts; C clients each send a request whose
 *               body trickles one byte per second: how long each connection lives.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { AdminApiClient } from "@platform/admin-api";
import pg from "pg";
import { readEnv } from "../../services/gateway/src/config/env.js";
import { createGateway } from "../../services/gateway/src/gateway.js";
import { startFakeUpstream } from "../../test/fixtures/openai-upstream.js";
import { startTcpProxy } from "../../test/helpers/tcp-proxy.js";
import { type Service, spawnGateway } from "../lib/children.js";
import { createBenchDatabase } from "../lib/full-pipeline.js";

const usage = `usage: npx tsx bench/attack/store.ts <spool|revoke|hang|slow-body> [options]

  spool      --calls <n> (default 863) --concurrency <n> (default 20)
  revoke     (no options)
  hang       (no options)
  slow-body  --clients <n> (default 300) --watch <s> (default 130)

  --postgres <url>  admin URL (default postgres://postgres@127.0.0.1:5432/postgres)
  --redis <url>     REDIS_URL (default redis://127.0.0.1:6379)
  --help
`;

const { values: flags, positionals } = parseArgs({
  options: {
    calls: { type: "string", default: "863" },
    concurrency: { type: "string", default: "20" },
    clients: { type: "string", default: "300" },
    watch: { type: "string", default: "130" },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
    redis: { type: "string", default: "redis://127.0.0.1:6379" },
    help: { type: "boolean", default: false },
  },
  allowPositionals: true,
});
const scenario = positionals[0];
if (flags.help || scenario === undefined || !["spool", "revoke", "hang", "slow-body"].includes(scenario)) {
  process.stdout.write(usage);
  process.exit(flags.help ? 0 : 2);
}

const MASTER = "sk-attack-master-0123456789";
const priced = "      input_cost_per_token: 0.0001\n      output_cost_per_token: 0.0002\n";
const configYaml = (upstream: string) =>
  `model_list:\n  - model_name: general\n    litellm_params:\n      model: openai/fake-model\n      api_base: ${upstream}\n${priced}`;

function writeConfig(yaml: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "attack-config-")), "config.yaml");
  writeFileSync(path, yaml);
  return path;
}

/** The gateway's admin API at `origin`, with the master key. */
const admin = (origin: string) => new AdminApiClient({ baseUrl: origin, masterKey: MASTER });

const chatBody = JSON.stringify({
  model: "general",
  messages: [{ role: "user", content: "hi" }],
  max_tokens: 5,
});
const chat = (origin: string, key: string) =>
  fetch(`${origin}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: chatBody,
  }).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });

/**
 * Starts a gateway from source with `env` and the master key (bench/lib/children.ts spawnGateway); its stdout
 * lines from then on are appended to `logs`.
 */
async function gatewayProcess(
  env: Record<string, string>,
  logs: string[],
): Promise<{ service: Service; origin: string }> {
  const started = await spawnGateway("gateway", { GATEWAY_MASTER_KEY: MASTER, ...env });
  started.service.child.stdout?.on("data", (chunk: Buffer) =>
    logs.push(...chunk.toString().split("\n").filter(Boolean)),
  );
  return started;
}

async function spool(): Promise<void> {
  const calls = Number(flags.calls);
  const concurrency = Number(flags.concurrency);
  const db = await createBenchDatabase(flags.postgres);
  const upstream = await startFakeUpstream({ record: false });
  const proxy = await startTcpProxy(Number(new URL(db.url).port || 5432));
  const viaProxy = new URL(db.url);
  viaProxy.port = String(proxy.port);
  const env = {
    DATABASE_URL: viaProxy.toString(),
    GATEWAY_CONFIG: writeConfig(configYaml(upstream.url)),
    GATEWAY_SPOOL_DIR: mkdtempSync(join(tmpdir(), "attack-spool-")),
    LOG_LEVEL: "info",
  };
  const logs: string[] = [];
  const sql = new pg.Client({ connectionString: db.url });
  try {
    const first = await gatewayProcess(env, logs);
    const { key } = await admin(first.origin).generateKey({});
    if ((await chat(first.origin, key)) !== 200) throw new Error("warm-up call failed");
    await sleep(1500); // the warm-up row is written
    proxy.cut();
    let answered = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < calls) {
          next += 1;
          if ((await chat(first.origin, key)) === 200) answered += 1;
        }
      }),
    );
    await first.service.stop(15_000);
    const handover = logs.find((l) => l.includes("spend:"));
    proxy.restore();
    const second = await gatewayProcess(env, logs);
    await sql.connect();
    let rows = 0;
    for (let i = 0; i < 30; i += 1) {
      await sleep(500);
      const now = (await sql.query("SELECT count(*)::int AS n FROM spend_logs")).rows[0].n as number;
      if (now === rows && now > 1) break;
      rows = now;
    }
    const ids = (await sql.query("SELECT count(DISTINCT request_id)::int AS n FROM spend_logs")).rows[0].n;
    await second.service.stop();
    const shutdownLine = handover === undefined ? "(none)" : (JSON.parse(handover) as { msg: string }).msg;
    process.stdout.write(
      `spool: ${answered} of ${calls} calls answered during the outage (+1 before it)\n` +
        `  shutdown said: ${shutdownLine}\n` +
        `  spend rows after the restart: ${rows} (distinct request ids: ${ids}; expected ${answered + 1})\n`,
    );
  } finally {
    await sql.end().catch(() => undefined);
    await proxy.close();
    await upstream.close();
    await db.drop();
  }
}

/** A fresh database, a fake upstream, a TCP proxy in front of Postgres, and in-process gateways on them. */
async function inProcessSetup() {
  const db = await createBenchDatabase(flags.postgres);
  const upstream = await startFakeUpstream({ record: false });
  const proxy = await startTcpProxy(Number(new URL(db.url).port || 5432));
  const viaProxy = new URL(db.url);
  viaProxy.port = String(proxy.port);
  const keyPrefix = `attack:store:${process.pid}:`;
  const config = writeConfig(configYaml(upstream.url));
  const started: Array<{ shutdown(ms: number): Promise<void> }> = [];
  return {
    proxy,
    directUrl: db.url,
    proxiedUrl: viaProxy.toString(),
    async start(databaseUrl: string) {
      const gateway = await createGateway(
        readEnv({
          GATEWAY_CONFIG: config,
          GATEWAY_MASTER_KEY: MASTER,
          DATABASE_URL: databaseUrl,
          REDIS_URL: flags.redis,
          GATEWAY_SPOOL_DIR: mkdtempSync(join(tmpdir(), "attack-spool-")),
          LOG_LEVEL: "silent",
        }),
        { limits: { keyPrefix } },
      );
      started.push(gateway);
      return { gateway, origin: await gateway.app.listen({ port: 0, host: "127.0.0.1" }) };
    },
    async close() {
      for (const gateway of started.reverse()) await gateway.shutdown(2000);
      await proxy.close();
      await upstream.close();
      await db.drop();
    },
  };
}

async function hang(): Promise<void> {
  const setup = await inProcessSetup();
  try {
    const { origin } = await setup.start(setup.proxiedUrl);
    const { key } = await admin(origin).generateKey({});
    const { key: unseen } = await admin(origin).generateKey({});
    if ((await chat(origin, key)) !== 200) throw new Error("warm-up call failed");
    await sleep(2000); // the cached record is older than the 1.5 s after which a refresh is due
    setup.proxy.stall();
    let slowest = 0;
    const statuses: Record<number, number> = {};
    for (let i = 0; i < 50; i += 1) {
      const t0 = performance.now();
      const status = await chat(origin, key);
      slowest = Math.max(slowest, performance.now() - t0);
      statuses[status] = (statuses[status] ?? 0) + 1;
      await sleep(60);
    }
    const t0 = performance.now();
    const unknown = await fetch(`${origin}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${unseen}`, "content-type": "application/json" },
      body: chatBody,
    });
    const unknownMs = performance.now() - t0;
    const message = ((await unknown.json()) as { error?: { message?: string } }).error?.message;
    process.stdout.write(
      `hang: known key, 50 calls while Postgres hangs: statuses ${JSON.stringify(statuses)}, slowest ${slowest.toFixed(0)} ms\n` +
        `  key not seen before: ${unknown.status} after ${unknownMs.toFixed(0)} ms: ${message}\n`,
    );
    setup.proxy.restore();
  } finally {
    await setup.close();
  }
}

async function revoke(): Promise<void> {
  const setup = await inProcessSetup();
  const { proxy } = setup;
  try {
    const a = await setup.start(setup.directUrl);
    const b = await setup.start(setup.proxiedUrl);
    await sleep(500); // both subscribed
    const { key, token } = await admin(a.origin).generateKey({});
    if ((await chat(b.origin, key)) !== 200) throw new Error("B did not accept the key");
    proxy.cut();
    const revokedAt = performance.now();
    await admin(a.origin).deleteKeys({ keys: [token] });
    let servedAfter = 0;
    let refusedAfterMs = Number.NaN;
    while (performance.now() - revokedAt < 15_000) {
      const status = await chat(b.origin, key);
      if (status === 401) {
        refusedAfterMs = performance.now() - revokedAt;
        break;
      }
      if (status === 200) servedAfter += 1;
      await sleep(10);
    }
    process.stdout.write(
      `revoke: B (cut off from Postgres) refused the revoked key after ${refusedAfterMs.toFixed(0)} ms ` +
        `(timing includes the /key/delete round trip); calls B answered after the revocation: ${servedAfter}\n`,
    );
  } finally {
    await setup.close();
  }
}

async function slowBody(): Promise<void> {
  const clients = Number(flags.clients);
  const watchMs = Number(flags.watch) * 1000;
  const upstream = await startFakeUpstream({ record: false });
  const { service, origin } = await gatewayProcess(
    { GATEWAY_CONFIG: writeConfig(configYaml(upstream.url)), LOG_LEVEL: "warn" },
    [],
  );
  const port = Number(new URL(origin).port);
  const started = performance.now();
  const lifetimes: number[] = [];
  const sockets: net.Socket[] = [];
  for (let i = 0; i < clients; i += 1) {
    const socket = net.connect(port, "127.0.0.1");
    socket.on("error", () => undefined);
    socket.once("close", () => lifetimes.push(performance.now() - started));
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${MASTER}\r\n` +
        `content-type: application/json\r\ncontent-length: 1000000\r\n\r\n{`,
    );
    sockets.push(socket);
  }
  const timer = setInterval(() => {
    for (const socket of sockets) if (!socket.destroyed) socket.write(" ");
  }, 1000);
  while (performance.now() - started < watchMs && lifetimes.length < clients) await sleep(500);
  clearInterval(timer);
  const open = clients - lifetimes.length;
  lifetimes.sort((x, y) => x - y);
  const at = (q: number) =>
    ((lifetimes[Math.floor(q * (lifetimes.length - 1))] ?? Number.NaN) / 1000).toFixed(1);
  process.stdout.write(
    `slow-body: ${clients} clients trickling 1 byte/s; after ${((performance.now() - started) / 1000).toFixed(0)} s ` +
      `${open} still open; closed ones lived min ${at(0)} s, median ${at(0.5)} s, max ${at(1)} s\n`,
  );
  for (const socket of sockets) socket.destroy();
  await service.stop();
  await upstream.close();
}

const run = { spool, revoke, hang, "slow-body": slowBody }[
  scenario as "spool" | "revoke" | "hang" | "slow-body"
];
await run();
process.exit(0);
