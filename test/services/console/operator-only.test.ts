/**
 * The console without a chat (no MONGO_URI), as `npm start` from a checkout runs it: operator-only mode. The
 * health check answers without a chat database, pages send a visitor to the master-key sign-in, and the
 * operator's sign-in works against a real gateway; a chat cookie signs nobody in. The operator generates keys
 * (of no user, or of a chosen user) through `POST /api/admin/keys`, which checks Origin and CSRF like every
 * write and names the operator in the gateway's audit log.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConsoleEnv } from "../../../services/console/server/config.js";
import { type ConsoleStack, JWT_REFRESH_SECRET, startConsoleStack, Visitor } from "../../helpers/console.js";
import { MASTER_KEY } from "../../helpers/gateway.js";

describe("operator-only mode (no MONGO_URI)", () => {
  let stack: ConsoleStack;
  beforeAll(async () => {
    stack = await startConsoleStack({ chat: false });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("reads an environment without MONGO_URI, and a placeholder one, as no chat", () => {
    const base = { GATEWAY_MASTER_KEY: MASTER_KEY, JWT_REFRESH_SECRET };
    expect(readConsoleEnv(base).mongoUri).toBeUndefined();
    expect(readConsoleEnv({ ...base, MONGO_URI: "replace-me" }).mongoUri).toBeUndefined();
    expect(readConsoleEnv({ ...base, MONGO_URI: "mongodb://chat/LibreChat" }).mongoUri).toBe(
      "mongodb://chat/LibreChat",
    );
  });

  it("is healthy without a chat database and sends pages to the master-key sign-in", async () => {
    const visitor = new Visitor(stack.url);
    const health = await visitor.request("GET", "/_health");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ ok: true });
    const page = await visitor.request("GET", "/");
    expect(page.status).toBe(302);
    expect(page.headers.get("location")).toBe("/admin/login");
  });

  it("signs the operator in with the master key, and a chat cookie in nobody", async () => {
    const chatCookie = new Visitor(stack.url).withChatCookie("not-a-session");
    expect((await chatCookie.request("GET", "/api/me")).status).toBe(401);

    const visitor = new Visitor(stack.url);
    const wrong = await visitor.request("POST", "/api/admin/login", { body: { master_key: "sk-wrong" } });
    expect(wrong.status).toBe(401);
    const ok = await visitor.request("POST", "/api/admin/login", { body: { master_key: MASTER_KEY } });
    expect(ok.status).toBe(200);
    expect((await visitor.me()).body).toMatchObject({ kind: "operator", is_admin: true });
    const users = await visitor.request("GET", "/api/admin/users");
    expect(users.status).toBe(200);
    expect(users.body).toMatchObject({ users: expect.any(Array) });
  });

  it("generates keys for the operator (no user) and for a user; Origin, CSRF and bad owners refused", async () => {
    const visitor = new Visitor(stack.url);
    expect((await visitor.request("POST", "/api/admin/keys", { body: { name: "nobody" } })).status).toBe(401);
    await visitor.request("POST", "/api/admin/login", { body: { master_key: MASTER_KEY } });
    await visitor.me();
    const body = { name: "operator-ci" };
    const cross = await visitor.request("POST", "/api/admin/keys", { body, origin: "https://evil.example" });
    expect(cross.status).toBe(403);
    expect(cross.body).toMatchObject({ error: { type: "csrf_error" } });
    const token = visitor.csrfToken;
    visitor.csrfToken = undefined;
    expect((await visitor.request("POST", "/api/admin/keys", { body })).status).toBe(403);
    visitor.csrfToken = token;
    // The own-key route stays for chat users.
    expect((await visitor.request("POST", "/api/keys", { body })).status).toBe(403);

    const made = await visitor.request<{ key: string; token: string; max_budget: number | null }>(
      "POST",
      "/api/admin/keys",
      { body: { ...body, max_budget: 5 } },
    );
    expect(made.status).toBe(201);
    expect(made.headers.get("cache-control")).toBe("no-store");
    expect(made.body.key).toMatch(/^sk-[0-9A-Za-z]{40}$/);
    expect(made.body.max_budget).toBe(5);
    const info = await stack.admin.keyInfo(made.body.token);
    expect(info.info.user_id).toBeNull();
    const models = await fetch(`${stack.gateway.url}/v1/models`, {
      headers: { authorization: `Bearer ${made.body.key}` },
    });
    expect(models.status).toBe(200);
    const audit = (await stack.admin.auditLogs({ key_hash: made.body.token })).logs;
    expect(audit.map((r) => [r.actor, r.action])).toEqual([["console:operator:master-key", "key.generate"]]);

    await stack.admin.newUser({ user_id: "dev-1", user_email: "dev@example.com", max_budget: 10 });
    const forUser = await visitor.request<{ token: string }>("POST", "/api/admin/keys", {
      body: { name: "dev-laptop", user_id: "dev-1" },
    });
    expect(forUser.status).toBe(201);
    expect((await stack.admin.keyInfo(forUser.body.token)).info.user_id).toBe("dev-1");
    const again = await visitor.request("POST", "/api/admin/keys", {
      body: { name: "dev-laptop", user_id: "dev-1" },
    });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({
      error: {
        param: "name",
        message:
          'This user already has an active key named "dev-laptop". Choose another name or revoke that key.',
      },
    });
    const looser = await visitor.request("POST", "/api/admin/keys", {
      body: { name: "dev-rich", user_id: "dev-1", max_budget: 50 },
    });
    expect(looser.status).toBe(400);
    expect(looser.body).toMatchObject({ error: { param: "max_budget" } });
    const unknown = await visitor.request("POST", "/api/admin/keys", {
      body: { name: "ghost-key", user_id: "no-such-user" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: { param: "user_id" } });
    expect(JSON.stringify(unknown.body)).toContain("does not exist");
  });
});
