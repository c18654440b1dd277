/**
 * Spend rows that wait for Postgres survive the process: SIGTERM's shutdown during a database outage hands
 * them to the spool folder, and the next start (Postgres back) writes each exactly once.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { describeDatabase } from "../../../../services/gateway/src/db/pool.js";
import { spoolFolderName } from "../../../../services/gateway/src/spend/spool.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { adminCall, deployment, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";
import { databasePerTest } from "../../../helpers/postgres.js";
import { captureLogger } from "../../../helpers/redis.js";
import { openStore, spendRow } from "../store/harness.js";

const { cleanups, database, proxyTo, sqlClient } = databasePerTest();
const priced = "      input_cost_per_token: 0.0001\n      output_cost_per_token: 0.0002\n";

let upstream: FakeUpstream | undefined;
afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});

async function gatewayOn(databaseUrl: string, spoolDir: string, log = captureLogger()): Promise<TestGateway> {
  upstream ??= await startFakeUpstream({ record: false });
  const gw = await startTestGateway(
    `model_list:\n${deployment("general", upstream.url, priced)}`,
    { DATABASE_URL: databaseUrl, GATEWAY_SPOOL_DIR: spoolDir },
    { logger: log, store: { flushIntervalMs: 100 } },
  );
  cleanups.push(() => gw.close());
  return gw;
}

async function newKey(gw: TestGateway): Promise<{ key: string; token: string }> {
  const res = await adminCall<{ key: string; token: string }>(gw, "POST", "/key/generate", {});
  expect(res.status).toBe(200);
  return res.body;
}

describe("spend spool", () => {
  it("shutdown in a Postgres outage spools the waiting rows; the restart writes every row exactly once", async () => {
    const db = await database();
    const proxy = await proxyTo(db);
    const sql = await sqlClient(db);
    const spoolDir = mkdtempSync(join(tmpdir(), "gw-spool-"));
    const log = captureLogger();
    const first = await gatewayOn(db.urlVia(proxy.port), spoolDir, log);
    const { key, token } = await newKey(first);
    const client = first.clientWith(key);
    const ask = (i: number) =>
      client.chat.completions.create({
        model: "general",
        messages: [{ role: "user", content: `call ${i}` }],
      });
    await ask(0);
    await expect
      .poll(async () => (await sql.query("SELECT count(*)::int AS n FROM spend_logs")).rows[0].n, {
        timeout: 5000,
      })
      .toBe(1);

    proxy.cut();
    const during = 40;
    await Promise.all(Array.from({ length: during }, (_, i) => ask(i + 1)));
    await first.close();
    const handover = log.lines.find((l) => l.msg.includes("handed to the spool"));
    expect(handover?.msg).toContain(`${during} rows`);
    expect(handover?.msg).toContain(spoolDir);

    proxy.restore();
    const second = await gatewayOn(db.urlVia(proxy.port), spoolDir);
    await expect
      .poll(async () => (await sql.query("SELECT count(*)::int AS n FROM spend_logs")).rows[0].n, {
        timeout: 10_000,
      })
      .toBe(during + 1);
    const totals = await sql.query(
      "SELECT count(DISTINCT request_id)::int AS ids, sum(spend)::float8 AS logged FROM spend_logs",
    );
    const key_ = await sql.query("SELECT spend::float8 AS spend FROM keys WHERE token = $1", [token]);
    expect(totals.rows[0].ids).toBe(during + 1);
    expect(key_.rows[0].spend).toBeCloseTo(totals.rows[0].logged, 10);
    const folder = join(spoolDir, spoolFolderName(describeDatabase(db.urlVia(proxy.port))));
    await expect.poll(() => readdirSync(folder).length, { timeout: 5000 }).toBe(0);
    await second.close();
  });

  it("spools rows while Postgres is failing, before any shutdown (a crash keeps them)", async () => {
    const db = await database();
    const proxy = await proxyTo(db);
    const spoolDir = mkdtempSync(join(tmpdir(), "gw-spool-"));
    const { store } = await openStore(db.urlVia(proxy.port), { spoolDir });
    cleanups.push(() => store.close());
    proxy.cut();
    const rows = [spendRow(), spendRow(), spendRow()];
    for (const row of rows) store.spend.record(row);
    const folder = join(spoolDir, spoolFolderName(describeDatabase(db.urlVia(proxy.port))));
    const spooledIds = () =>
      readdirSync(folder).flatMap((file) =>
        readFileSync(join(folder, file), "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => (JSON.parse(line) as { requestId: string }).requestId),
      );
    await expect
      .poll(() => (existsSync(folder) ? spooledIds() : []), { timeout: 5000 })
      .toEqual(rows.map((r) => r.requestId));
    proxy.restore();
    await expect.poll(() => readdirSync(folder).length, { timeout: 10_000 }).toBe(0);
  });

  it("replays a segment left by a crash idempotently: rows already written count once, a torn line is skipped", async () => {
    const db = await database();
    const sql = await sqlClient(db);
    const spoolDir = mkdtempSync(join(tmpdir(), "gw-spool-"));
    const first = await openStore(db.url, { spoolDir });
    const written = [spendRow({ spend: 0.25 }), spendRow({ spend: 0.5 })];
    for (const row of written) first.store.spend.record(row);
    await first.store.close();
    expect((await sql.query("SELECT count(*)::int AS n FROM spend_logs")).rows[0].n).toBe(2);

    // What a crash leaves: a segment holding rows already written, one that is not, and a half-written line.
    const folder = join(spoolDir, spoolFolderName(describeDatabase(db.url)));
    await mkdir(folder, { recursive: true });
    const fresh = spendRow({ spend: 0.125 });
    const lines = [...written, fresh].map((row) => JSON.stringify(row));
    writeFileSync(join(folder, "spend-999999999-0a1b-1.jsonl"), `${lines.join("\n")}\n{"requestId":"torn`);

    const second = await openStore(db.url, { spoolDir });
    cleanups.push(() => second.store.close());
    await expect
      .poll(async () => (await sql.query("SELECT count(*)::int AS n FROM spend_logs")).rows[0].n, {
        timeout: 5000,
      })
      .toBe(3);
    const sum = await sql.query("SELECT sum(spend)::float8 AS s FROM spend_logs");
    expect(sum.rows[0].s).toBeCloseTo(0.875, 10);
    await expect.poll(() => readdirSync(folder).length, { timeout: 5000 }).toBe(0);
    expect(second.log.lines.some((l) => l.includes("unreadable lines skipped"))).toBe(true);
  });
});
