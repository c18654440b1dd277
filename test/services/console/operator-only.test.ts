/**
 * The console without a chat (no MONGO_URI), as `npm start` from a checkout runs it: operator-only mode. The
 * health check answers without a chat database, pages send a visitor to the master-key sign-in, and the
 * operator's sign-in works against a real gateway; a chat cookie signs nobody in.
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
});
