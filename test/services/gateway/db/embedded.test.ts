/**
 * The embedded database (PGlite through its socket server, `db/embedded.ts`), for real: the gateway's migrations
 * run on it and its data survives a close and reopen; the data folder's lock refuses a second live gateway and
 * takes over a stale one; and the gateway as a process (as `npm start` runs it, GATEWAY_EMBEDDED_DB set, no
 * DATABASE_URL) makes a virtual key that works, is restarted, and the key still works.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyBaseLogger } from "fastify";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import {
  EMBEDDED_POOL_MAX,
  EmbeddedDatabaseError,
  lockDataDir,
  startEmbeddedDatabase,
} from "../../../../services/gateway/src/db/embedded.js";
import { migrate } from "../../../../services/gateway/src/db/migrate.js";
import { migrations } from "../../../../services/gateway/src/db/migrations.js";
import { createPool } from "../../../../services/gateway/src/db/pool.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { deployment, MASTER_KEY, writeConfig } from "../../../helpers/gateway.js";
import {
  freePort,
  type GatewayProcess,
  logLines,
  startGatewayProcess,
} from "../../../helpers/gateway-process.js";
import { GATEWAY_TABLES, publicTables } from "../../../helpers/postgres.js";

const silent = pino({ level: "silent" }) as unknown as FastifyBaseLogger;
const folders: string[] = [];
const tempFolder = () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-embedded-"));
  folders.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

// PGlite creates its database (initdb in WebAssembly) on the first open: seconds, far more on a loaded machine.
const SLOW = { timeout: 240_000 };

describe("the embedded database", SLOW, () => {
  it("runs the gateway's migrations, keeps their rows across a reopen, and is not migrated twice", async () => {
    const dataDir = join(tempFolder(), "postgres");
    const first = await startEmbeddedDatabase(dataDir);
    const pool = createPool(first.url, silent, { max: EMBEDDED_POOL_MAX });
    expect(await migrate(pool, silent)).toEqual(migrations.map((m) => m.id));
    await pool.query("INSERT INTO users (user_id) VALUES ($1)", ["kept"]);
    // The audit log's guard holds on PGlite too (its one role owns the tables).
    await pool.query(
      "INSERT INTO audit_log (actor, via, action) VALUES ('master_key', 'master_key', 'user.new')",
    );
    for (const statement of [
      "UPDATE audit_log SET actor = 'x'",
      "DELETE FROM audit_log",
      "TRUNCATE audit_log",
    ]) {
      await expect(pool.query(statement)).rejects.toThrow(/append-only/);
    }
    await pool.end();
    await first.close();
    expect(existsSync(`${dataDir}.pid`)).toBe(false);

    const second = await startEmbeddedDatabase(dataDir);
    const again = createPool(second.url, silent, { max: EMBEDDED_POOL_MAX });
    try {
      expect(await migrate(again, silent)).toEqual([]);
      // PGlite loads pgvector: the semantic cache's table exists there (migration 14), unlike on Debian's Postgres.
      expect(await publicTables(again)).toEqual([...GATEWAY_TABLES, "semantic_cache_entries"].sort());
      const users = await again.query("SELECT user_id FROM users");
      expect(users.rows).toEqual([{ user_id: "kept" }]);
    } finally {
      await again.end();
      await second.close();
    }
  });

  it("refuses a data folder a live process holds and takes over one whose process is gone", async () => {
    const dataDir = join(tempFolder(), "postgres");
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      const release = lockDataDir(dataDir);
      release();
      // A live process other than this one holds it.
      writeFileSync(`${dataDir}.pid`, `${holder.pid}\n`);
      expect(() => lockDataDir(dataDir)).toThrow(EmbeddedDatabaseError);
      expect(() => lockDataDir(dataDir)).toThrow(`in use by process ${holder.pid}`);
    } finally {
      holder.kill("SIGKILL");
      await once(holder, "exit");
    }
    // The holder is gone: its stale file is taken over.
    const release = lockDataDir(dataDir);
    expect(readFileSync(`${dataDir}.pid`, "utf8").trim()).toBe(String(process.pid));
    release();
  });
});

describe("the gateway on the embedded database (GATEWAY_EMBEDDED_DB, no DATABASE_URL)", SLOW, () => {
  const started: GatewayProcess[] = [];
  let upstream: FakeUpstream | undefined;
  afterAll(async () => {
    for (const p of started) p.child.kill("SIGKILL");
    await upstream?.close();
  });

  async function start(dataDir: string, extra: Record<string, string> = {}) {
    const port = await freePort();
    const gateway = startGatewayProcess({
      PORT: String(port),
      GATEWAY_MASTER_KEY: MASTER_KEY,
      GATEWAY_EMBEDDED_DB: dataDir,
      ...extra,
    });
    started.push(gateway);
    await expect
      .poll(() => gateway.output(), { timeout: 200_000, interval: 250 })
      .toMatch(/gateway listening|cannot start/);
    expect(gateway.output()).not.toContain("cannot start");
    return { ...gateway, url: `http://127.0.0.1:${port}` };
  }

  async function stop(gateway: GatewayProcess) {
    const exited = once(gateway.child, "exit");
    gateway.child.kill("SIGTERM");
    const [code] = await exited;
    expect(code).toBe(0);
  }

  const models = (url: string, key: string) =>
    fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });

  it("makes a virtual key that works, and after a restart the key still works", async () => {
    const dataDir = join(tempFolder(), "postgres");
    upstream = await startFakeUpstream({ record: false });
    const config = writeConfig(`model_list:\n${deployment("general", upstream.url)}`);
    // Several workers cannot share the embedded database: the setting is ignored, and said so.
    const first = await start(dataDir, { GATEWAY_WORKERS: "2", GATEWAY_CONFIG: config });
    const lines = logLines(first.output());
    expect(lines.map((l) => l.msg)).toContain(
      "GATEWAY_WORKERS=2 ignored: the embedded database serves one gateway process; " +
        "set DATABASE_URL to a Postgres server to run several",
    );
    const database = lines.find((l) => String(l.msg).startsWith("database: embedded PostgreSQL (PGlite)"));
    expect(database?.dataDir).toBe(dataDir);
    expect(first.output()).not.toContain("gateway workers listening");

    const generated = await fetch(`${first.url}/key/generate`, {
      method: "POST",
      headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ key_alias: "newcomer" }),
    });
    expect(generated.status).toBe(200);
    const { key } = (await generated.json()) as { key: string };
    expect(key).toMatch(/^sk-/);
    expect((await models(first.url, key)).status).toBe(200);
    expect((await models(first.url, "sk-not-a-key-0123456789")).status).toBe(401);
    // A call's spend row reaches the embedded database (written on the event loop: PGlite serves one session).
    const chat = await fetch(`${first.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "general", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(chat.status).toBe(200);
    await chat.arrayBuffer();
    await expect
      .poll(
        async () => {
          const logs = await fetch(`${first.url}/spend/logs`, {
            headers: { authorization: `Bearer ${MASTER_KEY}` },
          });
          return ((await logs.json()) as unknown[]).length;
        },
        { timeout: 30_000, interval: 250 },
      )
      .toBe(1);
    await stop(first);
    expect(existsSync(`${dataDir}.pid`)).toBe(false);

    const second = await start(dataDir);
    expect(second.output()).not.toContain("database migration applied");
    const answer = await models(second.url, key);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ object: "list" });
    await stop(second);
  });
});
