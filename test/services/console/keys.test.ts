/**
 * Keys, usage and the Admin view through the console against a real gateway: every key endpoint is scoped
 * to the session's user (IDOR), limits never looser than the account's, the full key appears only in the
 * generate response (never in a later response or a log line), a call made with the key shows up in Usage,
 * a revoked key is refused, and only administrators reach the Admin API.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsoleStack,
  chatVisitor,
  startConsoleStack,
  type Visitor,
  waitUntilKeyRefused,
} from "../../helpers/console.js";
import { waitFor } from "../../helpers/redis.js";

let stack: ConsoleStack;
let admin: Visitor; // first registered chat account: ADMIN
let alice: Visitor;
let bob: Visitor;
let aliceId: string;
let bobId: string;

interface CreatedKey {
  key: string;
  token: string;
  key_name: string;
}

beforeAll(async () => {
  stack = await startConsoleStack();
  admin = (await chatVisitor(stack, "admin@example.com")).visitor;
  ({ visitor: alice, userId: aliceId } = await chatVisitor(stack, "alice@example.com"));
  ({ visitor: bob, userId: bobId } = await chatVisitor(stack, "bob@example.com"));
});
afterAll(async () => {
  await stack?.close();
});

async function generate(visitor: Visitor, body: Record<string, unknown>): Promise<CreatedKey> {
  const res = await visitor.request<CreatedKey>("POST", "/api/keys", { body });
  expect(res.status, res.text).toBe(201);
  expect(res.headers.get("cache-control")).toBe("no-store");
  return res.body;
}

describe("a user's own keys", () => {
  it("generates a key shown once in full, then only as sk-…abcd, with a 90-day default lifetime", async () => {
    const created = await generate(alice, { name: "laptop", rpm_limit: 10, models: ["general"] });
    expect(created.key).toMatch(/^sk-[0-9A-Za-z]{40}$/);
    expect(created.key_name).toBe(`sk-…${created.key.slice(-4)}`);
    const list = await alice.request<{ keys: Array<Record<string, unknown>> }>("GET", "/api/keys");
    const listed = list.body.keys.find((k) => k.token === created.token);
    expect(listed).toMatchObject({
      key_alias: "laptop",
      key_name: created.key_name,
      rpm_limit: 10,
      status: "active",
    });
    const days = (Date.parse(String(listed?.expires)) - Date.parse(String(listed?.created_at))) / 86_400_000;
    expect(days).toBeCloseTo(90, 3);
    expect(list.text).not.toContain(created.key);
  });

  it("refuses limits looser than the account's, naming the limit", async () => {
    const res = await alice.request("POST", "/api/keys", { body: { name: "greedy", max_budget: 11 } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { param: "max_budget", type: "invalid_request_error" } });
    const rpm = await alice.request("POST", "/api/keys", { body: { name: "greedy", rpm_limit: 61 } });
    expect(rpm.body).toMatchObject({ error: { param: "rpm_limit" } });
    const bad = await alice.request("POST", "/api/keys", { body: { name: "", duration: "forever" } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { param: "name" } });
  });

  it("a call with the key shows up in Usage; after revoking, the key is refused", async () => {
    const created = await generate(alice, { name: "script" });
    const client = stack.gateway.clientWith(created.key);
    await client.chat.completions.create({
      model: "general",
      messages: [{ role: "user", content: "hello there" }],
    });
    let usage: Record<string, unknown> = {};
    await waitFor("the call in Usage", async () => {
      usage = (await alice.request("GET", "/api/usage?days=7")).body;
      // The gateway's usage queries are separate reads: wait until the row is in every part of the answer.
      return (usage.recent as unknown[]).length > 0 && (usage.by_key as unknown[]).length > 0;
    });
    expect(usage).toMatchObject({ days: 7, user_id: aliceId });
    expect((usage.recent as Array<Record<string, unknown>>)[0]).toMatchObject({
      model_group: "general",
      api_key: created.token,
    });
    expect((usage.by_key as Array<Record<string, unknown>>)[0]).toMatchObject({ key_alias: "script" });

    const revoked = await alice.request("DELETE", `/api/keys/${created.token}`);
    expect(revoked.status).toBe(200);
    await waitUntilKeyRefused(client);
  });
});

describe("IDOR: one user can never reach another's keys", () => {
  it("Bob cannot list, read, revoke or see usage of Alice's keys through any endpoint", async () => {
    const aliceKey = await generate(alice, { name: "private" });
    const client = stack.gateway.clientWith(aliceKey.key);
    await client.chat.completions.create({
      model: "fast",
      messages: [{ role: "user", content: "secret work" }],
    });

    const bobKeys = await bob.request<{ keys: Array<{ token: string }> }>("GET", "/api/keys");
    expect(bobKeys.body.keys.map((k) => k.token)).not.toContain(aliceKey.token);
    // Revoking by hash, by the full key, or with a user id smuggled into the query or body: all 404/400.
    expect((await bob.request("DELETE", `/api/keys/${aliceKey.token}`)).status).toBe(404);
    expect((await bob.request("DELETE", `/api/keys/${aliceKey.key}`)).status).toBe(400);
    expect(
      (
        await bob.request("DELETE", `/api/keys/${aliceKey.token}?user_id=${aliceId}`, {
          body: { user_id: aliceId },
        })
      ).status,
    ).toBe(404);
    // A key "for Alice" made by Bob is Bob's.
    const smuggled = await generate(bob, { name: "smuggled", user_id: aliceId });
    expect((await stack.admin.keyInfo(smuggled.token)).info.user_id).toBe(bobId);
    // Usage is always the caller's own, whatever the query says.
    const usage = await bob.request("GET", `/api/usage?days=30&user_id=${aliceId}&api_key=${aliceKey.token}`);
    expect(usage.body).toMatchObject({ user_id: bobId, recent: [] });
    expect(usage.text).not.toContain(aliceKey.token);
    // Admin routes are closed to a plain user.
    for (const [method, path] of [
      ["GET", "/api/admin/users"],
      ["GET", `/api/admin/users/${aliceId}/keys`],
      ["DELETE", `/api/admin/keys/${aliceKey.token}`],
      ["POST", `/api/admin/users/${bobId}`],
      ["GET", "/api/admin/spend?days=7"],
    ] as const) {
      const res = await bob.request(method, path, method === "POST" ? { body: { max_budget: 1000 } } : {});
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    expect((await stack.admin.keyInfo(aliceKey.token)).info.status).toBe("active");
    expect(bob.seen.join("\n")).not.toContain(aliceKey.key);
  });
});

describe("the full key is never kept", () => {
  it("appears in no later response and in no log line", async () => {
    const created = await generate(alice, { name: "once" });
    const aliceSeen = alice.seen.length;
    const adminSeen = admin.seen.length;
    await alice.request("GET", "/api/keys");
    await alice.me();
    await alice.request("GET", "/api/usage?days=90");
    await admin.request("GET", `/api/admin/users/${aliceId}/keys`);
    const later = [...alice.seen.slice(aliceSeen), ...admin.seen.slice(adminSeen)];
    expect(later).toHaveLength(4);
    expect(later.join("\n")).not.toContain(created.key);
    expect(stack.logs.join("\n")).not.toContain(created.key);
    expect(stack.logs.join("\n")).not.toContain(created.key.slice(3));
    expect(stack.logs.join("\n")).not.toContain(alice.csrfToken);
  });
});

describe("the Admin view (role ADMIN)", () => {
  it("lists users with spend and budget, raises a budget, lists and revokes any user's key, sums platform spend", async () => {
    const users = await admin.request<{ users: Array<Record<string, unknown>> }>("GET", "/api/admin/users");
    expect(users.status).toBe(200);
    expect(users.body.users.map((u) => u.user_email)).toEqual(
      expect.arrayContaining(["admin@example.com", "alice@example.com", "bob@example.com"]),
    );
    const raised = await admin.request("POST", `/api/admin/users/${bobId}`, {
      body: { max_budget: 250, rpm_limit: 600 },
    });
    expect(raised.status).toBe(200);
    expect((await bob.me()).body).toMatchObject({ account: { max_budget: 250, rpm_limit: 600 } });
    const bad = await admin.request("POST", `/api/admin/users/${bobId}`, { body: { max_budget: -1 } });
    expect(bad.status).toBe(400);

    const bobKey = await generate(bob, { name: "bobs", max_budget: 200 });
    const keys = await admin.request<{ keys: Array<{ token: string }> }>(
      "GET",
      `/api/admin/users/${bobId}/keys`,
    );
    expect(keys.body.keys.map((k) => k.token)).toContain(bobKey.token);
    expect((await admin.request("DELETE", `/api/admin/keys/${bobKey.token}`)).status).toBe(200);
    expect((await stack.admin.keyInfo(bobKey.token)).info.status).toBe("revoked");

    const spend = await admin.request<{
      totals: { requests: number };
      daily: unknown[];
      by_model: Array<{ model: string }>;
    }>("GET", "/api/admin/spend?days=7");
    expect(spend.status).toBe(200);
    expect(spend.body.daily).toHaveLength(7);
    expect(spend.body.totals.requests).toBeGreaterThanOrEqual(2);
    expect(spend.body.by_model.map((m) => m.model)).toEqual(expect.arrayContaining(["general", "fast"]));
  });
});
