/**
 * Console sessions survive a restart and are shared by replicas: in Redis (REDIS_URL) and, without it, in
 * Postgres (DATABASE_URL). Without either they are per process (a restart signs everyone out). Also: the
 * console's writes name the session's user or operator in the gateway's audit log.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type ConsoleStack, chatVisitor, startConsoleStack, Visitor } from "../../helpers/console.js";
import { MASTER_KEY } from "../../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../helpers/postgres.js";
import { REDIS_URL } from "../../helpers/redis.js";

let stack: ConsoleStack | undefined;
let db: TestDatabase | undefined;
afterEach(async () => {
  await stack?.close();
  await db?.drop();
  stack = undefined;
  db = undefined;
});

/** Signs an operator in on `url`; the visitor carries the session cookie. */
async function operator(url: string): Promise<Visitor> {
  const visitor = new Visitor(url);
  const res = await visitor.request("POST", "/api/admin/login", { body: { master_key: MASTER_KEY } });
  expect(res.status).toBe(200);
  return visitor;
}

/** The same visitor (cookies, CSRF token) against another console instance. */
function moveTo(visitor: Visitor, url: string): Visitor {
  const moved = new Visitor(url);
  for (const [name, value] of visitor.cookies) moved.cookies.set(name, value);
  moved.csrfToken = visitor.csrfToken;
  return moved;
}

describe.each([
  ["Redis", async () => ({ REDIS_URL })],
  [
    "Postgres",
    async () => {
      db = await createTestDatabase();
      return { DATABASE_URL: db.url };
    },
  ],
])("console sessions in %s", (_name, env) => {
  it("are shared by two console instances and survive a restart", async () => {
    stack = await startConsoleStack({ env: await env() });
    const first = await operator(stack.url);
    const replica = await stack.replica();
    try {
      const there = moveTo(first, replica.url);
      expect((await there.request("GET", "/api/admin/users")).status).toBe(200);
      // A chat user's session (with its CSRF token) works on the replica too, writes included.
      const { visitor } = await chatVisitor(stack, "ann@example.com");
      const moved = moveTo(visitor, replica.url);
      const made = await moved.request("POST", "/api/keys", { body: { name: "shared" } });
      expect(made.status).toBe(201);
    } finally {
      await replica.close();
    }
    // "Restart": a new console process with the same settings still knows the session.
    const restarted = await stack.replica();
    try {
      const after = moveTo(first, restarted.url);
      expect((await after.request("GET", "/api/admin/users")).status).toBe(200);
      await after.me();
      expect((await after.request("POST", "/api/logout")).status).toBe(200);
      expect((await moveTo(first, stack.url).request("GET", "/api/admin/users")).status).toBe(401);
    } finally {
      await restarted.close();
    }
  });
});

describe("console sessions in memory (no REDIS_URL, no DATABASE_URL)", () => {
  it("are not known to another instance", async () => {
    stack = await startConsoleStack();
    const first = await operator(stack.url);
    const replica = await stack.replica();
    try {
      expect((await moveTo(first, replica.url).request("GET", "/api/admin/users")).status).toBe(401);
    } finally {
      await replica.close();
    }
  });
});

describe("the console's writes in the gateway's audit log", () => {
  it("name the chat user for their own key's life and the operator for an admin's revocation", async () => {
    stack = await startConsoleStack();
    const { visitor, userId } = await chatVisitor(stack, "bea@example.com");
    const made = await visitor.request<{ token: string }>("POST", "/api/keys", { body: { name: "bea-key" } });
    expect(made.status).toBe(201);
    const admin = await operator(stack.url);
    await admin.me();
    const revoked = await admin.request("DELETE", `/api/admin/keys/${made.body.token}`);
    expect(revoked.status).toBe(200);
    const rows = (await stack.admin.auditLogs({ key_hash: made.body.token })).logs;
    console.info(
      `audit rows of a key's life from the console:\n${rows.map((r) => `${r.actor} ${r.action} ${r.key_alias} ${r.key_hash_prefix} ${r.user_id} ${JSON.stringify(r.before)} -> ${JSON.stringify(r.after)}`).join("\n")}`,
    );
    expect(rows.map((r) => [r.actor, r.action])).toEqual([
      ["console:operator:master-key", "key.delete"],
      [`console:user:${userId}`, "key.generate"],
    ]);
    const provisioned = (await stack.admin.auditLogs({ action: "user.new", user_id: userId })).logs;
    expect(provisioned.map((r) => r.actor)).toEqual([`console:user:${userId}`]);
    // The Admin view's Audit tab reads it through the console (administrators only).
    const tab = await admin.request<{ logs: Array<{ action: string }>; total: number }>(
      "GET",
      `/api/admin/audit?user_id=${userId}&action=key.generate`,
    );
    expect(tab.status).toBe(200);
    expect(tab.body.logs.map((r) => r.action)).toEqual(["key.generate"]);
    // bea registered first, so the chat made her ADMIN; the next user is not.
    const other = await chatVisitor(stack, "cid@example.com");
    expect((await other.visitor.request("GET", "/api/admin/audit")).status).toBe(403);
    expect((await admin.request("GET", "/api/admin/audit?action=key.burn")).status).toBe(400);
  });
});
