/**
 * Spend survives a crash: a real gateway process (one process, or a primary with two workers) answers calls
 * against a fresh Postgres database that is slow to take spend rows (a lock holds `spend_logs`, so the writes
 * wait: no failure tells the gateway to spool), is killed with SIGKILL 150 ms after its last reply finished,
 * and is started again on the same spool folder once the lock is gone; every call answered must then be a row
 * in `spend_logs` (rows reach the fsync'd spool within 100 ms of their reply and are replayed at start).
 */
import { mkdtempSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

/** One non-streamed chat call on a connection of its own (so node:cluster spreads them over the workers). */
function call(url: string): Promise<number> {
  const body = JSON.stringify({ model: "general", messages: [{ role: "user", content: "book me" }] });
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/v1/chat/completions`,
      {
        method: "POST",
        agent: false,
        headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** Calls for `ms` with 4 in flight; resolves the number answered 200 once the last reply has finished. */
async function load(url: string, ms: number): Promise<number> {
  const until = performance.now() + ms;
  let answered = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (performance.now() < until) if ((await call(url)) === 200) answered++;
    }),
  );
  return answered;
}

/** Calls made by each start before the measured ones (two starts per test). */
const WARM_UP = 4;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `pid` is a running process. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("spend rows survive a SIGKILL", { timeout: 240_000 }, () => {
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

  /** Starts a gateway on `db` and `spoolDir`; resolves once it serves (every worker, with `workers` > 1). */
  async function start(db: TestDatabase, spoolDir: string, workers: number) {
    const port = await freePort();
    const gateway = startGatewayProcess({
      PORT: String(port),
      GATEWAY_WORKERS: String(workers),
      GATEWAY_MASTER_KEY: MASTER_KEY,
      GATEWAY_CONFIG: config,
      DATABASE_URL: db.url,
      GATEWAY_SPOOL_DIR: spoolDir,
    });
    started.push(gateway);
    const url = `http://127.0.0.1:${port}`;
    // tsx compiles the gateway at start: on a loaded machine that takes a while.
    await expect.poll(() => gateway.output(), { timeout: 60_000 }).toContain("listening");
    await waitLive(url);
    for (let i = 0; i < WARM_UP; i++) await call(url); // the first calls load modules lazily
    if (workers > 1) {
      await expect.poll(() => gateway.output(), { timeout: 30_000 }).toContain("gateway workers listening");
    }
    return { ...gateway, url };
  }

  /** Rows in `spend_logs` once the count has stopped growing (or reached `expected`) within 15 s. */
  async function rowsAfterRestart(db: TestDatabase, expected: number): Promise<number> {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      let rows = 0;
      for (let i = 0; i < 75 && rows < expected; i++) {
        rows = Number((await client.query("SELECT count(*) AS n FROM spend_logs")).rows[0].n);
        if (rows < expected) await sleep(200);
      }
      return rows;
    } finally {
      await client.end();
    }
  }

  /** Holds `spend_logs` with an EXCLUSIVE lock (reads pass, writes wait) until the returned release. */
  async function lockSpendLogs(db: TestDatabase): Promise<() => Promise<void>> {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query("BEGIN");
    await client.query("LOCK TABLE spend_logs IN EXCLUSIVE MODE");
    return async () => {
      await client.query("COMMIT");
      await client.end();
    };
  }

  async function fresh() {
    const db = await createTestDatabase();
    databases.push(db);
    return { db, spoolDir: mkdtempSync(join(tmpdir(), "gw-crash-spool-")) };
  }

  it("one process: none of the rows of replies finished 150 ms before the kill is lost", async () => {
    const { db, spoolDir } = await fresh();
    const first = await start(db, spoolDir, 1);
    expect(await rowsAfterRestart(db, WARM_UP)).toBe(WARM_UP);
    const release = await lockSpendLogs(db);
    const answered = await load(first.url, 1500);
    await sleep(150);
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));
    await release();
    await start(db, spoolDir, 1);
    const rows = (await rowsAfterRestart(db, answered + 2 * WARM_UP)) - 2 * WARM_UP;
    console.log(`SIGKILL of the gateway: ${answered} calls answered, ${answered - rows} spend rows lost`);
    expect(rows).toBe(answered);
  });

  it("a worker, then the primary: none of the rows of replies finished 150 ms before each kill is lost", async () => {
    const { db, spoolDir } = await fresh();
    const gateway = await start(db, spoolDir, 2);
    const workerPids = () =>
      logLines(gateway.output())
        .filter((l) => l.msg === "gateway listening")
        .map((l) => Number(l.pid));
    await expect.poll(() => workerPids().length, { timeout: 20_000 }).toBe(2);
    expect(await rowsAfterRestart(db, WARM_UP)).toBe(WARM_UP);
    const release = await lockSpendLogs(db);
    let answered = await load(gateway.url, 1500);
    await sleep(150);
    const victim = workerPids()[0] as number;
    process.kill(victim, "SIGKILL");
    await expect.poll(() => workerPids().length, { timeout: 30_000 }).toBe(3); // its replacement
    answered += await load(gateway.url, 1500);
    await sleep(150);
    const workers = workerPids().filter(alive);
    gateway.child.kill("SIGKILL");
    await expect.poll(() => workers.filter(alive).length, { timeout: 10_000 }).toBe(0);
    await release();
    await start(db, spoolDir, 1);
    const rows = (await rowsAfterRestart(db, answered + 2 * WARM_UP)) - 2 * WARM_UP;
    console.log(
      `SIGKILL of a worker, then of the primary: ${answered} calls answered, ${answered - rows} rows lost`,
    );
    expect(rows).toBe(answered);
  });
});
