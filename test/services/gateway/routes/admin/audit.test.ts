/**
 * The audit log (real Postgres): a key's life (generate, update, revoke) through the admin API with the master
 * key and on behalf of a console user leaves one row per write, in the same transaction as the change (a
 * refused write leaves none), never the key or its full hash; rows cannot be changed; GET /audit/logs filters
 * and pages; retention deletes old rows.
 */
import { AdminApiClient, type AuditLogEntry } from "@platform/admin-api";
import { describe, expect, it } from "vitest";
import { pruneAuditLog } from "../../../../../services/gateway/src/audit/query.js";
import { databasePerTest } from "../../../../helpers/postgres.js";
import { adminApp, call, MASTER_KEY, openStore } from "../../store/harness.js";

const { cleanups, database, sqlClient } = databasePerTest();

async function gateway(url: string) {
  const opened = await openStore(url);
  const app = await adminApp(opened);
  cleanups.push(
    () => opened.store.close(),
    () => app.close(),
  );
  const base = await app.listen({ port: 0, host: "127.0.0.1" });
  return { app, opened, client: new AdminApiClient({ baseUrl: base, masterKey: MASTER_KEY }) };
}

/** A key's life: generate, update, revoke. Returns the key's hash. */
async function keyLife(client: AdminApiClient, alias: string): Promise<string> {
  const made = await client.generateKey({ key_alias: alias, user_id: "alice", max_budget: 5 });
  await client.updateKey({ key: made.key, max_budget: 8, models: ["general"] });
  await client.deleteKeys({ keys: [made.key] });
  return made.token;
}

const summary = (row: AuditLogEntry) => ({
  actor: row.actor,
  action: row.action,
  key_alias: row.key_alias,
  key_hash_prefix: row.key_hash_prefix,
  user_id: row.user_id,
  before: row.before,
  after: row.after,
});

describe("the audit log", () => {
  it("records a key's life from the API and from the console, one row per write, oldest last", async () => {
    const db = await database();
    const { client } = await gateway(db.url);
    await client.newUser({ user_id: "alice", max_budget: 50 });
    const apiHash = await keyLife(client, "from-api");
    const consoleHash = await keyLife(client.as("console:user:alice"), "from-console");

    const api = await client.auditLogs({ key_hash: apiHash });
    const fromConsole = await client.auditLogs({ actor: "console:user:alice" });
    console.info(
      `audit rows of a key's life:\n${JSON.stringify([...api.logs, ...fromConsole.logs].map(summary), null, 1)}`,
    );
    expect(api.logs.map((r) => [r.actor, r.action])).toEqual([
      ["master_key", "key.delete"],
      ["master_key", "key.update"],
      ["master_key", "key.generate"],
    ]);
    expect(fromConsole.logs.map((r) => [r.action, r.key_alias, r.via])).toEqual([
      ["key.delete", "from-console", "master_key"],
      ["key.update", "from-console", "master_key"],
      ["key.generate", "from-console", "master_key"],
    ]);
    const [revoke, update, generate] = api.logs as [AuditLogEntry, AuditLogEntry, AuditLogEntry];
    expect(generate).toMatchObject({
      key_alias: "from-api",
      key_hash_prefix: apiHash.slice(0, 12),
      user_id: "alice",
    });
    expect(generate.before).toBeNull();
    expect(generate.after).toMatchObject({ key_alias: "from-api", max_budget: 5, revoked_at: null });
    expect(update.before).toEqual({ max_budget: 5, models: [] });
    expect(update.after).toEqual({ max_budget: 8, models: ["general"] });
    expect(revoke.before).toEqual({ revoked_at: null });
    expect(typeof revoke.after?.revoked_at).toBe("string");
    expect(revoke.source_ip).toBe("127.0.0.1");
    expect(revoke.request_id).toBeTruthy();
    // Never the key, never its full hash.
    const text = JSON.stringify([...api.logs, ...fromConsole.logs]);
    expect(text).not.toContain(apiHash);
    expect(text).not.toContain(consoleHash);
    expect(text).not.toMatch(/sk-[A-Za-z0-9]{40}/);
    // The user's creation and filters by action, user and time.
    expect((await client.auditLogs({ action: "user.new" })).logs.map((r) => r.user_id)).toEqual(["alice"]);
    expect((await client.auditLogs({ user_id: "alice" })).total).toBe(7);
    expect((await client.auditLogs({ end_date: "2000-01-01" })).total).toBe(0);
    const page = await client.auditLogs({ page: 2, page_size: 3 });
    expect([page.logs.length, page.total, page.total_pages]).toEqual([3, 7, 3]);
  });

  it("writes nothing for a refused change, refuses a malformed actor, and a row cannot be changed", async () => {
    const db = await database();
    const { app, client } = await gateway(db.url);
    await client.generateKey({ key_alias: "taken" });
    await expect(client.generateKey({ key_alias: "taken" })).rejects.toMatchObject({ status: 400 });
    const bad = await app.inject({
      method: "POST",
      url: "/key/generate",
      payload: {},
      headers: { authorization: `Bearer ${MASTER_KEY}`, "x-audit-actor": "somebody else" },
    });
    expect(bad.statusCode).toBe(400);
    expect((await client.auditLogs()).total).toBe(1);
  });

  it("records the console's sign-in events as their actor, from the browser's address, and refuses others", async () => {
    const db = await database();
    const { app, client } = await gateway(db.url);
    await client
      .as("console:user:alice")
      .recordAuditEvent({ action: "console.sign_in", user_id: "alice", source_ip: "203.0.113.7" });
    await client.as("console:operator:anonymous").recordAuditEvent({
      action: "console.sign_in_failed",
      source_ip: "2001:db8::1",
      reason: "bad_master_key",
    });
    await client.as("console:operator:master-key").recordAuditEvent({ action: "console.sign_out" });
    const { logs } = await client.auditLogs();
    expect(logs.map((r) => [r.actor, r.action, r.user_id, r.source_ip, r.after])).toEqual([
      ["console:operator:master-key", "console.sign_out", null, "127.0.0.1", null],
      [
        "console:operator:anonymous",
        "console.sign_in_failed",
        null,
        "2001:db8::1",
        { reason: "bad_master_key" },
      ],
      ["console:user:alice", "console.sign_in", "alice", "203.0.113.7", null],
    ]);
    expect((await client.auditLogs({ action: "console.sign_in" })).total).toBe(1);
    // Only the console's events, in their shape: an admin write's action or a made-up address is 400.
    for (const payload of [
      { action: "key.generate" },
      { action: "console.sign_in", source_ip: "<script>" },
      { action: "console.sign_in", extra: 1 },
    ]) {
      const res = await app.inject({
        method: "POST",
        url: "/audit/event",
        payload,
        headers: { authorization: `Bearer ${MASTER_KEY}` },
      });
      expect(res.statusCode).toBe(400);
    }
    expect((await client.auditLogs()).total).toBe(3);
  });

  it("refuses UPDATE, DELETE and TRUNCATE of its rows, to the gateway's own database role too", async () => {
    const db = await database();
    const { client } = await gateway(db.url);
    await client.generateKey({ key_alias: "kept" });
    // The same role the gateway connects with (the tables' owner).
    const sql = await sqlClient(db);
    await expect(sql.query("UPDATE audit_log SET actor = 'x'")).rejects.toThrow(/append-only/);
    await expect(sql.query("DELETE FROM audit_log")).rejects.toThrow(/append-only/);
    await expect(sql.query("TRUNCATE audit_log")).rejects.toThrow(/append-only/);
    expect((await client.auditLogs()).total).toBe(1);
  });

  it("deletes only rows past the retention period, and never one younger than the floor", async () => {
    const db = await database();
    const { opened } = await gateway(db.url);
    const sql = await sqlClient(db);
    // A row the database recorded 400 days ago: only a superuser with triggers off (a restore) can write one;
    // the database stamps every other insert with its own time, whatever created_at says.
    await sql.query("SET session_replication_role = replica");
    await sql.query(
      `INSERT INTO audit_log (created_at, recorded_at, actor, via, action, user_id)
       VALUES (now() - interval '400 days', now() - interval '400 days', 'master_key', 'master_key', 'user.new', 'old')`,
    );
    await sql.query("SET session_replication_role = DEFAULT");
    await sql.query(
      `INSERT INTO audit_log (created_at, recorded_at, actor, via, action, user_id)
       VALUES (now() - interval '400 days', now() - interval '400 days', 'master_key', 'master_key', 'user.new', 'backdated')`,
    );
    const now = Date.now();
    expect(await pruneAuditLog(opened.store.pool, 365, now)).toBe(1);
    // A backdated created_at, a clock far ahead or a short retention cannot delete a row younger than the floor.
    expect(await pruneAuditLog(opened.store.pool, 365, now + 366 * 86_400_000)).toBe(0);
    expect(await pruneAuditLog(opened.store.pool, 1, now + 2 * 86_400_000)).toBe(0);
    await expect(sql.query("DELETE FROM audit_log WHERE user_id = 'backdated'")).rejects.toThrow(
      /append-only/,
    );
    const left = (await call(await adminApp(opened), "GET", "/audit/logs")).body;
    expect(left.logs.map((r: AuditLogEntry) => r.user_id)).toEqual(["backdated"]);
  });

  it("stores values under secret-looking metadata keys as [redacted], nested ones too", async () => {
    const db = await database();
    const { client } = await gateway(db.url);
    await client.newUser({ user_id: "carol", metadata: { team: "ml", Password: "user-pass-1" } });
    const made = await client.generateKey({
      key_alias: "with-secrets",
      metadata: {
        team: "ml",
        password: "hunter2-generate",
        upstream: { API_Key: "sk-upstream-1", db: { clientSecret: "cs-1", host: "db.internal" } },
        hooks: [{ url: "https://hook", authorization: "Bearer hook-token-1" }],
        max_tokens: 100,
      },
    });
    await client.updateKey({
      key: made.key,
      metadata: { team: "ml", password: "hunter2-update", access_token: "at-1" },
    });
    await client.updateUser({
      user_id: "carol",
      metadata: { team: "ml", db_passwd: "user-pass-2", private_key: "pk" },
    });

    const rows = (await client.auditLogs()).logs;
    const text = JSON.stringify(rows);
    for (const secret of [
      "user-pass-1",
      "user-pass-2",
      "hunter2-generate",
      "hunter2-update",
      "sk-upstream-1",
      "cs-1",
      "hook-token-1",
      "at-1",
      '"pk"',
    ]) {
      expect(text).not.toContain(secret);
    }
    const generate = rows.find((r) => r.action === "key.generate");
    expect(generate?.after?.metadata).toEqual({
      team: "ml",
      password: "[redacted]",
      upstream: { API_Key: "[redacted]", db: { clientSecret: "[redacted]", host: "db.internal" } },
      hooks: [{ url: "https://hook", authorization: "[redacted]" }],
      max_tokens: 100,
    });
    const update = rows.find((r) => r.action === "key.update");
    expect(update?.after?.metadata).toEqual({
      team: "ml",
      password: "[redacted]",
      access_token: "[redacted]",
    });
    const userUpdate = rows.find((r) => r.action === "user.update");
    expect(userUpdate?.before?.metadata).toEqual({ team: "ml", Password: "[redacted]" });
    expect(userUpdate?.after?.metadata).toEqual({
      team: "ml",
      db_passwd: "[redacted]",
      private_key: "[redacted]",
    });
  });

  it("writes no row for an update that changes nothing", async () => {
    const db = await database();
    const { client } = await gateway(db.url);
    await client.newUser({ user_id: "dave", max_budget: 20, metadata: { team: "a" } });
    const made = await client.generateKey({ user_id: "dave", max_budget: 5, metadata: { password: "p1" } });
    expect((await client.auditLogs()).total).toBe(2);
    for (let i = 0; i < 20; i += 1) {
      await client.updateKey({ key: made.key, max_budget: 5, metadata: { password: "p1" } });
      await client.updateUser({ user_id: "dave", max_budget: 20, metadata: { team: "a" } });
    }
    expect((await client.auditLogs()).total).toBe(2);
    // A real change is still recorded, a change of a secret too (both sides redacted).
    await client.updateKey({ key: made.key, max_budget: 6 });
    await client.updateKey({ key: made.key, metadata: { password: "p2" } });
    const [secret, budget] = (await client.auditLogs({ action: "key.update" })).logs;
    expect(budget?.after).toEqual({ max_budget: 6 });
    expect(secret?.before).toEqual({ metadata: { password: "[redacted]" } });
    expect(secret?.after).toEqual({ metadata: { password: "[redacted]" } });
  });
});
