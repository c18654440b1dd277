/**
 * The gateway scaled out as the kubernetes target's Deployment runs it (infra/kubernetes): three gateway
 * processes with the pod's env (`POD_FACTS.gateway.env`: one process per pod, no start-up migrations, spend spool
 * folder), after the `gateway-migrate` Job's program ran once, behind one round-robin balancer (the real
 * Caddy, standing in for the gateway Service), sharing one Redis key prefix and one fresh Postgres database, with
 * the upstream a contract fake. Through the balancer only: a key's budget, its rpm limit and its revocation hold
 * across all replicas. Each test prints its figures (admitted calls, booked spend, revocation lag).
 *
 * It lives under test/infra/ because what it shows is the Deployment's promise (replicas share limits through
 * Redis and Postgres, not through the pod), not one gateway module's.
 */
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../bench/lib/children.js";
import { migrateScript } from "../../infra/kubernetes/migrate-job.js";
import { POD_FACTS } from "../../infra/kubernetes/pod-facts.js";
import { inputTokenBound } from "../../services/gateway/src/cost/input-bound.js";
import { migrations } from "../../services/gateway/src/db/migrations.js";
import { type FakeUpstream, startFakeUpstream } from "../fixtures/openai-upstream.js";
import { startCaddy, type TestCaddy } from "../helpers/caddy.js";
import { adminCall, deployment, MASTER_KEY, writeConfig } from "../helpers/gateway.js";
import { freePort, type GatewayProcess, startGatewayProcess, waitLive } from "../helpers/gateway-process.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { deleteKeys, REDIS_URL, uniquePrefix, waitFor } from "../helpers/redis.js";

const execFileAsync = promisify(execFile);
const MIGRATE_MODULE = new URL("../../services/gateway/src/db/migrate.ts", import.meta.url).pathname;
const REPLICAS = 3;
/** USD per token, both directions: a call's cost stays below its estimate (see `estimateOf`). */
const PRICE = 0.0001;
const MAX_TOKENS = 16;
/** 40 characters: the fake's reply (`You said: ` + these) is 13 tokens, under MAX_TOKENS. */
const CONTENT = "Shared limits across gateway replicas ok.";

let upstream: FakeUpstream;
let db: TestDatabase;
let prefix: string;
let balancer: TestCaddy | undefined;
let balancerUrl: string;
const replicas: GatewayProcess[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream({ record: false });
  db = await createTestDatabase();
  prefix = uniquePrefix("k8s-replicas");
  // The migration Job: its program, once, before any replica starts (from source here, the image runs dist/).
  const job = await execFileAsync(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", migrateScript(MIGRATE_MODULE)],
    { cwd: repoRoot, env: { PATH: process.env.PATH ?? "", DATABASE_URL: db.url } },
  );
  expect(job.stdout).toContain(`migrations applied: ${JSON.stringify(migrations.map((m) => m.id))}`);
  const config = writeConfig(
    `model_list:\n${deployment("general", upstream.url, `      input_cost_per_token: ${PRICE}\n      output_cost_per_token: ${PRICE}\n`)}`,
  );
  const ports = await Promise.all(Array.from({ length: REPLICAS }, () => freePort()));
  for (const port of ports) {
    const spool = mkdtempSync(join(tmpdir(), "gw-spool-"));
    replicas.push(
      startGatewayProcess({
        ...POD_FACTS.gateway.env,
        GATEWAY_SPOOL_DIR: spool,
        PORT: String(port),
        LOG_LEVEL: "warn",
        GATEWAY_CONFIG: config,
        GATEWAY_MASTER_KEY: MASTER_KEY,
        DATABASE_URL: db.url,
        REDIS_URL,
        GATEWAY_REDIS_KEY_PREFIX: prefix,
      }),
    );
  }
  await Promise.all(ports.map((port) => waitLive(`http://127.0.0.1:${port}`)));
  const port = await freePort();
  balancerUrl = `http://127.0.0.1:${port}`;
  balancer = await startCaddy(
    [
      "{",
      "\tadmin off",
      "\tauto_https off",
      "}",
      `${balancerUrl} {`,
      `\treverse_proxy ${ports.map((p) => `127.0.0.1:${p}`).join(" ")} {`,
      "\t\tlb_policy round_robin",
      // Which replica answered, so the test can tell them apart without calling them directly.
      "\t\theader_down X-Replica {http.reverse_proxy.upstream.hostport}",
      "\t}",
      "}",
      "",
    ].join("\n"),
    `${balancerUrl}/health/liveliness`,
  );
}, 120_000);

afterAll(async () => {
  balancer?.close();
  for (const r of replicas) r.child.kill("SIGKILL");
  await upstream?.close();
  await db?.drop();
  if (prefix !== undefined) await deleteKeys(prefix);
});

/** One chat call's outcome through the balancer, and the replica that answered it. */
interface Outcome {
  status: number;
  replica: string;
  /** `x-litellm-response-cost` of an admitted call (USD); 0 otherwise. */
  cost: number;
  errorType?: string;
  message?: string;
}

const body = { model: "general", messages: [{ role: "user", content: CONTENT }], max_tokens: MAX_TOKENS };

/**
 * The gateway's own reservation of one call (USD): the input bound for a model without a known tokenizer (its
 * UTF-8 bytes) plus `max_tokens`, at the config's prices.
 */
function estimateOf(): number {
  return (inputTokenBound(body, []) + MAX_TOKENS) * PRICE;
}

async function chat(apiKey: string): Promise<Outcome> {
  const res = await fetch(`${balancerUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { error?: { type?: string; message?: string } };
  return {
    status: res.status,
    replica: res.headers.get("x-replica") ?? "",
    cost: res.ok ? Number(res.headers.get("x-litellm-response-cost")) : 0,
    errorType: json.error?.type,
    message: json.error?.message,
  };
}

async function newKey(fields: Record<string, unknown>): Promise<string> {
  const created = await adminCall<{ key: string }>({ url: balancerUrl }, "POST", "/key/generate", fields);
  expect(created.status).toBe(200);
  return created.body.key;
}

async function bookedSpend(key: string): Promise<number> {
  const info = await adminCall<{ info: { spend: number } }>(
    { url: balancerUrl },
    "GET",
    `/key/info?key=${encodeURIComponent(key)}`,
  );
  expect(info.status).toBe(200);
  return info.body.info.spend;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe(`${REPLICAS} gateway replicas behind one round-robin balancer`, { timeout: 90_000 }, () => {
  it("a key's budget holds across all replicas: booked spend never passes it", async () => {
    const estimate = estimateOf();
    const probe = await chat(MASTER_KEY);
    expect(probe.status).toBe(200);
    // docs/leases.md: only a call costing more than its estimate can overshoot, by the difference. Here none
    // does, so the documented tolerance is 0.
    expect(probe.cost).toBeLessThanOrEqual(estimate);
    const tolerance = 0;
    const budget = Number((estimate * 10).toFixed(6));
    const key = await newKey({ key_alias: "replicas-budget", max_budget: budget });
    const outcomes: Outcome[] = [];
    for (let wave = 0; wave < 10; wave++) {
      const batch = await Promise.all(Array.from({ length: 4 * REPLICAS }, () => chat(key)));
      outcomes.push(...batch);
      if (batch.every((o) => o.status !== 200)) break;
    }
    const admitted = outcomes.filter((o) => o.status === 200);
    const refused = outcomes.filter((o) => o.status !== 200);
    for (const o of refused) expect([o.status, o.errorType]).toEqual([429, "budget_exceeded"]);
    expect(new Set(outcomes.map((o) => o.replica)).size).toBe(REPLICAS);
    expect(refused.length).toBeGreaterThan(0);
    const answered = sum(admitted.map((o) => o.cost));
    // Every replica writes its spend rows within its flush interval (1 s); then Postgres holds all of it.
    let booked = 0;
    await waitFor("every replica's spend rows in Postgres", async () => {
      booked = await bookedSpend(key);
      return Math.abs(booked - answered) < 1e-9;
    });
    console.log(
      `[k8s-replicas] budget $${budget} (estimate $${estimate.toFixed(6)}/call, cost $${probe.cost.toFixed(6)}/call): ` +
        `${admitted.length} admitted, ${refused.length} refused (429 budget_exceeded) over ${REPLICAS} replicas; ` +
        `booked spend $${booked.toFixed(6)} (${((booked / budget) * 100).toFixed(1)} % of the budget; tolerance $${tolerance})`,
    );
    expect(booked).toBeLessThanOrEqual(budget + tolerance);
    expect(admitted.length).toBeGreaterThan(1);
  });

  it("a key's rpm limit holds across all replicas: the window admits at most the limit, the rest get 429", async () => {
    const rpm = 10;
    // One fixed 60 s window (docs/limits.md): start early in a minute so the burst stays in it.
    const minute = () => Math.floor(Date.now() / 60_000);
    if (Date.now() % 60_000 > 30_000) await new Promise((r) => setTimeout(r, 60_500 - (Date.now() % 60_000)));
    const window = minute();
    const key = await newKey({ key_alias: "replicas-rpm", rpm_limit: rpm });
    const burst = await Promise.all(Array.from({ length: 3 * rpm }, () => chat(key)));
    let admitted = burst.filter((o) => o.status === 200).length;
    for (const o of burst.filter((o) => o.status !== 200)) {
      expect(o.status).toBe(429);
      expect(o.message).toMatch(/allows 10 requests per minute \(rpm_limit\)/);
    }
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(rpm);
    const inBurst = admitted;
    // Slices a replica holds unused go back after 1 s idle (docs/leases.md): the window then admits exactly rpm.
    let sent = burst.length;
    await waitFor(
      "the window's whole rpm admitted",
      async () => {
        const more = await Promise.all(Array.from({ length: REPLICAS }, () => chat(key)));
        sent += more.length;
        admitted += more.filter((o) => o.status === 200).length;
        return admitted >= rpm;
      },
      10_000,
      200,
    );
    const after = await Promise.all(Array.from({ length: 2 * REPLICAS }, () => chat(key)));
    console.log(
      `[k8s-replicas] rpm_limit ${rpm}: burst of ${burst.length} → ${inBurst} admitted; ` +
        `${admitted} admitted of ${sent} sent in the window; then ${after.length} more → ` +
        `${after.filter((o) => o.status === 429).length} × 429 from ${new Set(after.map((o) => o.replica)).size} replicas`,
    );
    expect(minute()).toBe(window);
    expect(admitted).toBe(rpm);
    for (const o of after) expect(o.status).toBe(429);
    expect(new Set(after.map((o) => o.replica)).size).toBe(REPLICAS);
  });

  it("a key revoked through one replica is refused by every replica, by the invalidation bus", async () => {
    const key = await newKey({ key_alias: "replicas-revoked" });
    // Every replica has the key in its cache (answered a call with it).
    const warm = new Set<string>();
    await waitFor("every replica answered the key", async () => {
      const o = await chat(key);
      expect(o.status).toBe(200);
      warm.add(o.replica);
      return warm.size === REPLICAS;
    });
    const res = await fetch(`${balancerUrl}/key/delete`, {
      method: "POST",
      headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ keys: [key] }),
    });
    expect(res.status).toBe(200);
    const through = res.headers.get("x-replica");
    const revokedAt = Date.now();
    const refusedAt = new Map<string, number>();
    const admittedAfter: Outcome[] = [];
    await waitFor(
      "every replica refuses the key",
      async () => {
        const o = await chat(key);
        if (o.status === 200) {
          // Allowed only until that replica's message arrives: never after it has refused once.
          expect(refusedAt.has(o.replica)).toBe(false);
          admittedAfter.push(o);
        } else {
          expect(o.status).toBe(401);
          if (!refusedAt.has(o.replica)) refusedAt.set(o.replica, Date.now());
        }
        return refusedAt.size === REPLICAS;
      },
      10_000,
    );
    const lag = Math.max(...[...refusedAt.values()].map((t) => t - revokedAt));
    console.log(
      `[k8s-replicas] key revoked through ${through}: refused by all ${REPLICAS} replicas ${lag} ms later ` +
        `(first refusal seen per replica, polling through the balancer); ${admittedAfter.length} calls admitted in between`,
    );
    // Within the bus's message latency, far inside the key cache's 60 s refresh age (docs/architecture.md): the
    // refusals came from the invalidation message, not from cache expiry.
    expect(lag).toBeLessThan(60_000);
  });
});
