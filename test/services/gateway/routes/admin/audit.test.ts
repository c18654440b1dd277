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
    const sql = await sqlClient(db);
    await expect(sql.query("UPDATE audit_log SET actor = 'x'")).rejects.toThrow(/append-only/);
    await expect(sql.query("TRUNCATE audit_log")).rejects.toThrow(/append-only/);
  });

  it("deletes rows past the retention period", async () => {
    const db = await database();
    const { opened, client } = await gateway(db.url);
    await client.newUser({ user_id: "bob" });
    const now = opened.clock.now();
    expect(await pruneAuditLog(opened.store.pool, 365, now + 364 * 86_400_000)).toBe(0);
    expect(await pruneAuditLog(opened.store.pool, 365, now + 366 * 86_400_000)).toBe(1);
    expect((await call(await adminApp(opened), "GET", "/audit/logs")).body.total).toBe(0);
  });
});
