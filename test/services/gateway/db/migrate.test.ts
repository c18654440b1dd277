import { describe, expect, it } from "vitest";
import {
  MigrationsPendingError,
  migrate,
  pendingMigrations,
} from "../../../../services/gateway/src/db/migrate.js";
import { migrations } from "../../../../services/gateway/src/db/migrations.js";
import {
  createPool,
  DatabaseUnavailableError,
  describeDatabase,
  waitForDatabase,
} from "../../../../services/gateway/src/db/pool.js";
import { databasePerTest, GATEWAY_TABLES, publicTables } from "../../../helpers/postgres.js";
import { openStore, recordingLogger } from "../store/harness.js";

const { cleanups, database, proxyTo, sqlClient } = databasePerTest();

describe("migrations", () => {
  it("two instances starting at once both succeed and the schema is applied once", async () => {
    const db = await database();
    const [a, b] = await Promise.all([openStore(db.url), openStore(db.url)]);
    cleanups.push(
      () => a.store.close(),
      () => b.store.close(),
    );
    const check = await sqlClient(db);
    const applied = await check.query("SELECT id FROM gateway_migrations ORDER BY id");
    expect(applied.rows.map((r) => r.id)).toEqual(migrations.map((m) => m.id));
    expect(await publicTables(check)).toEqual(GATEWAY_TABLES);
    // Both instances logged; exactly one applied the migration.
    const appliedLines = [...a.log.lines, ...b.log.lines].filter((l) =>
      l.includes("database migration applied"),
    );
    expect(appliedLines).toHaveLength(migrations.length);
  });

  it("is idempotent: a second run applies nothing", async () => {
    const db = await database();
    const log = recordingLogger();
    const pool = createPool(db.url, log);
    cleanups.push(() => pool.end());
    expect(await migrate(pool, log)).toEqual(migrations.map((m) => m.id));
    expect(await migrate(pool, log)).toEqual([]);
  });

  it("rolls back a failing migration and keeps the earlier ones", async () => {
    const db = await database();
    const log = recordingLogger();
    const pool = createPool(db.url, log);
    cleanups.push(() => pool.end());
    const broken = [
      { id: 1, name: "ok", sql: "CREATE TABLE t1 (id int)" },
      { id: 2, name: "bad", sql: "CREATE TABLE t2 (id int); SELECT * FROM no_such_table" },
    ];
    await expect(migrate(pool, log, broken)).rejects.toThrow(/no_such_table/);
    const ids = await pool.query("SELECT id FROM gateway_migrations");
    expect(ids.rows).toEqual([{ id: 1 }]);
    const t2 = await pool.query("SELECT to_regclass('t2') AS t");
    expect(t2.rows[0].t).toBeNull();
  });
});

describe("runMigrations: false (GATEWAY_RUN_MIGRATIONS=false, migrations run once per rollout)", () => {
  it("refuses to start on a database that lacks migrations, and changes nothing in it", async () => {
    const db = await database();
    const ids = migrations.map((m) => m.id);
    await expect(openStore(db.url, { runMigrations: false })).rejects.toThrow(MigrationsPendingError);
    await expect(openStore(db.url, { runMigrations: false })).rejects.toThrow(
      `lacks migration(s) ${ids.join(", ")} and GATEWAY_RUN_MIGRATIONS=false`,
    );
    const check = await sqlClient(db);
    expect(await publicTables(check)).toEqual([]);
  });

  it("starts without migrating once the rollout applied them; one missing migration still refuses", async () => {
    const db = await database();
    const log = recordingLogger();
    const pool = createPool(db.url, log);
    cleanups.push(() => pool.end());
    await migrate(pool, log, migrations.slice(0, -1));
    const last = migrations.at(-1)?.id;
    expect(await pendingMigrations(pool)).toEqual([last]);
    await expect(openStore(db.url, { runMigrations: false })).rejects.toThrow(`lacks migration(s) ${last} `);
    await migrate(pool, log);
    const started = await openStore(db.url, { runMigrations: false });
    cleanups.push(() => started.store.close());
    expect(started.log.lines.filter((l) => l.includes("database migration applied"))).toEqual([]);
    expect(started.log.lines.some((l) => l.includes("database migrations: none pending"))).toBe(true);
  });
});

describe("start-up wait", () => {
  it("names host:port, never the password, and fails with a clear message after the timeout", async () => {
    const db = await database();
    const proxy = await proxyTo(db);
    proxy.cut();
    const url = db.urlVia(proxy.port).replace("postgres@", "postgres:s3cret-pass@");
    const log = recordingLogger();
    const started = Date.now();
    const failure = openStore(url, { log, startupTimeoutMs: 1200 });
    await expect(failure).rejects.toThrow(DatabaseUnavailableError);
    await expect(failure).rejects.toThrow(`Postgres at 127.0.0.1:${proxy.port}/${db.name} is not reachable`);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(log.lines.some((l) => l.includes(`waiting for Postgres at 127.0.0.1:${proxy.port}`))).toBe(true);
    expect(log.lines.join("\n")).not.toContain("s3cret-pass");
  });

  it("keeps waiting while the database comes up, then starts", async () => {
    const db = await database();
    const proxy = await proxyTo(db);
    proxy.cut();
    setTimeout(() => proxy.restore(), 800);
    const { store, log } = await openStore(db.urlVia(proxy.port), { startupTimeoutMs: 10_000 });
    cleanups.push(() => store.close());
    expect(log.lines.some((l) => l.includes("waiting for Postgres"))).toBe(true);
    expect(await store.readiness()).toEqual({ status: "connected" });
  });

  it("waitForDatabase gives up at once on a zero timeout", async () => {
    const log = recordingLogger();
    const pool = createPool("postgres://nobody:pw@127.0.0.1:1/none", log, { connectionTimeoutMillis: 500 });
    cleanups.push(() => pool.end());
    await expect(
      waitForDatabase(pool, "postgres://nobody:pw@127.0.0.1:1/none", { timeoutMs: 0, log }),
    ).rejects.toThrow(/127\.0\.0\.1:1\/none/);
  });

  it("describes a connection string without its credentials", () => {
    expect(describeDatabase("postgres://u:secret@db.internal:6543/gateway")).toBe("db.internal:6543/gateway");
    expect(describeDatabase("postgres://u:secret@db/gateway")).toBe("db:5432/gateway");
    expect(describeDatabase("not a url")).not.toContain("not a url");
  });
});
