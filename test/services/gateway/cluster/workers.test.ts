/**
 * GATEWAY_WORKERS=2 with the gateway as a real process: both workers answer calls, GET /metrics counts the
 * calls of both, SIGTERM lets every worker finish its in-flight calls, a killed worker is replaced, a start-up
 * failure exits 1 with one message, a value other than a positive integer or `auto` is refused, and without
 * Redis a key revoked through one worker is refused by the other within 2 s (its cache keeps the short ages).
 */
import { once } from "node:events";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnv } from "../../../../services/gateway/src/config/env.js";
import { migrations } from "../../../../services/gateway/src/db/migrations.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { deployment, MASTER_KEY, writeConfig } from "../../../helpers/gateway.js";
import {
  freePort,
  type GatewayProcess,
  logLines,
  startGatewayProcess,
  waitLive,
} from "../../../helpers/gateway-process.js";
import { createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";

const CALLS = 20;

/** One chat call on a connection of its own (so node:cluster's round-robin spreads them); resolves the body. */
function call(url: string, content: string, stream = false): Promise<string> {
  const body = JSON.stringify({ model: "general", messages: [{ role: "user", content }], stream });
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/v1/chat/completions`,
      {
        method: "POST",
        agent: false,
        headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () =>
          res.statusCode === 200 ? resolve(text) : reject(new Error(`${res.statusCode} ${text}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The sum of `litellm_proxy_total_requests_metric_total` over its series in one scrape of GET /metrics. */
async function requestsCounted(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith("litellm_proxy_total_requests_metric_total{"))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

// Real processes (a primary and two tsx workers each) start slowly on a loaded machine.
describe("GATEWAY_WORKERS=2", { timeout: 60_000 }, () => {
  let upstream: FakeUpstream;
  let config: string;
  const started: GatewayProcess[] = [];
  const databases: TestDatabase[] = [];
  beforeAll(async () => {
    upstream = await startFakeUpstream({ record: false });
    config = writeConfig(`model_list:\n${deployment("general", upstream.url)}`);
  });
  afterAll(async () => {
    for (const p of started) p.child.kill("SIGKILL");
    await upstream.close();
    for (const db of databases) await db.drop();
  });

  async function startTwo(env: Record<string, string> = {}): Promise<GatewayProcess & { url: string }> {
    const port = await freePort();
    const gateway = startGatewayProcess({
      PORT: String(port),
      GATEWAY_WORKERS: "2",
      GATEWAY_MASTER_KEY: MASTER_KEY,
      GATEWAY_CONFIG: config,
      ...env,
    });
    started.push(gateway);
    const url = `http://127.0.0.1:${port}`;
    await waitLive(url);
    await expect.poll(() => gateway.output(), { timeout: 20_000 }).toContain("gateway workers listening");
    return { ...gateway, url };
  }

  it("both workers answer, /metrics counts the calls of both, and SIGTERM lets in-flight calls finish", async () => {
    const gateway = await startTwo();
    const { url, child, output } = gateway;
    for (let i = 0; i < CALLS; i++) await call(url, `call ${i}`);
    // Whichever worker serves the scrape, it reports the whole gateway.
    for (let scrape = 0; scrape < 4; scrape++) expect(await requestsCounted(url)).toBe(CALLS);

    const holds = [upstream.holdNextStream(), upstream.holdNextStream()];
    const inFlight = [call(url, "finish me", true), call(url, "finish me too", true)];
    await Promise.all(holds.map((h) => h.firstChunkSent));
    const exited = once(child, "close"); // "close": after its output is all read
    child.kill("SIGTERM");
    await expect
      .poll(() => output(), { timeout: 10_000 })
      .toContain("every worker finishes its in-flight requests");
    for (const hold of holds) hold.release();
    const answers = await Promise.all(inFlight);
    expect(answers[0]).toContain("[DONE]");
    expect(answers[1]).toContain("[DONE]");
    const [code] = await exited;
    expect(code).toBe(0);

    const stopped = logLines(output()).filter((l) => l.msg === "worker stopped");
    expect(stopped.map((l) => l.worker).sort()).toEqual([0, 1]);
    for (const line of stopped) expect(line.calls).toBeGreaterThan(0); // both served
    expect(stopped.reduce((sum, l) => sum + Number(l.calls), 0)).toBe(CALLS + 2);
  });

  it("two workers starting together on a fresh database migrate it once and create the chat's service key once", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const { output } = await startTwo({
      DATABASE_URL: db.url,
      CHAT_SERVICE_KEY: `sk-chat-${"x".repeat(24)}`,
    });
    const lines = logLines(output());
    const applied = lines.filter((l) => l.msg === "database migration applied").map((l) => l.migration);
    expect(applied.sort()).toEqual(migrations.map((m) => m.id).sort());
    const keyStates = lines
      .filter((l) => l.msg === "chat service key ready (CHAT_SERVICE_KEY)")
      .map((l) => l.state);
    expect(keyStates.sort()).toEqual(["created", "exists"]);
  });

  it("without Redis, a key revoked through one worker is refused by every worker within 2 s", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const { url } = await startTwo({ DATABASE_URL: db.url });
    /** GET /v1/models with `key` on a connection of its own (round-robin: alternately each worker); the status. */
    const models = (key: string) =>
      fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}`, connection: "close" } }).then(
        (r) => r.status,
      );
    const made = await fetch(`${url}/key/generate`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${MASTER_KEY}`,
        "content-type": "application/json",
        connection: "close",
      },
      body: "{}",
    });
    const { key, token } = (await made.json()) as { key: string; token: string };
    for (let i = 0; i < 6; i++) expect(await models(key)).toBe(200); // cached in both workers

    const revoked = await fetch(`${url}/key/delete`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${MASTER_KEY}`,
        "content-type": "application/json",
        connection: "close",
      },
      body: JSON.stringify({ keys: [token] }),
    });
    expect(revoked.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2000)); // the revocation bound
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push(await models(key));
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401]);
  });

  it("replaces a worker that was killed, and keeps serving", async () => {
    const { url, output } = await startTwo();
    const listening = () => logLines(output()).filter((l) => l.msg === "gateway listening" && l.worker === 0);
    // The worker's own log line comes through its stdout, which may lag the primary's "workers listening".
    await expect.poll(() => listening().length, { timeout: 10_000 }).toBe(1);
    const victim = Number(listening()[0]?.pid);
    process.kill(victim, "SIGKILL");
    await expect
      .poll(
        () =>
          logLines(output()).find(
            (l) => l.msg === "gateway worker exited unexpectedly; starting a replacement",
          ),
        { timeout: 10_000 },
      )
      .toMatchObject({ worker: 0, pid: victim, signal: "SIGKILL" });
    await expect.poll(() => listening().length, { timeout: 20_000 }).toBe(2);
    expect(listening()[1]?.pid).not.toBe(victim);
    for (let i = 0; i < 4; i++) expect(await call(url, `after ${i}`)).toContain("You said");
  });

  it("exits 1 with one message when the workers cannot start", async () => {
    const broken = writeConfig(
      "model_list:\n  - model_name: general\n    litellm_params: {model: openai/x, api_key: os.environ/NOT_SET_ANYWHERE}\n",
    );
    const gateway = startGatewayProcess({
      PORT: String(await freePort()),
      GATEWAY_WORKERS: "2",
      GATEWAY_CONFIG: broken,
    });
    started.push(gateway);
    const [code] = await once(gateway.child, "exit");
    expect(code).toBe(1);
    const messages = gateway.output().match(/cannot start/g) ?? [];
    expect(messages).toHaveLength(1);
    expect(gateway.output()).toContain("NOT_SET_ANYWHERE");
    expect(gateway.output()).not.toContain("replacement");
  });

  it("refuses GATEWAY_WORKERS that is not a positive integer or auto", async () => {
    const gateway = startGatewayProcess({ PORT: String(await freePort()), GATEWAY_WORKERS: "abc" });
    started.push(gateway);
    const [code] = await once(gateway.child, "exit");
    expect(code).toBe(1);
    expect(gateway.output()).toMatch(
      /cannot start: invalid environment:\s+GATEWAY_WORKERS: must be a positive integer/,
    );
    for (const bad of ["0", "-1", "1.5", "two"])
      expect(() => readEnv({ GATEWAY_WORKERS: bad })).toThrow(/GATEWAY_WORKERS/);
    expect(readEnv({}).workers).toBe(1);
    expect(readEnv({ GATEWAY_WORKERS: "3" }).workers).toBe(3);
    expect(readEnv({ GATEWAY_WORKERS: "auto" }).workers).toBeGreaterThanOrEqual(1);
  });
});
