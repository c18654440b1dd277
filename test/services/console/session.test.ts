/**
 * Signing in to the console through the chat's session, with a real gateway behind it and the LibreChat
 * Mongo contract fake: cookies minted as LibreChat mints them, the refusals that send a visitor to
 * /unauthorized, revalidation and idle expiry, CSRF and Origin checks, just-in-time provisioning and its
 * failures, the operators' master-key sign-in, /_health and /metrics.
 */
import { AdminApiClient } from "@platform/admin-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../../services/console/server/app.js";
import { FakeLibreChatMongo } from "../../fixtures/librechat-mongo.js";
import {
  type ConsoleStack,
  chatVisitor,
  JWT_REFRESH_SECRET,
  startConsoleStack,
  Visitor,
} from "../../helpers/console.js";
import { MASTER_KEY } from "../../helpers/gateway.js";

let stack: ConsoleStack;
beforeAll(async () => {
  stack = await startConsoleStack();
});
afterAll(async () => {
  await stack?.close();
});

/** A visitor whose chat cookie is `token`; GET / must send it to /unauthorized. */
async function expectUnauthorized(token: string): Promise<void> {
  const visitor = new Visitor(stack.url).withChatCookie(token);
  const page = await visitor.request("GET", "/");
  expect(page.status).toBe(302);
  expect(page.headers.get("location")).toBe("/unauthorized");
  expect((await visitor.request("GET", "/api/me")).status).toBe(401);
  expect(visitor.cookies.has("console_session")).toBe(false);
}

describe("sign-in through the chat's session", () => {
  it("sends a visitor without a chat session to /unauthorized, which links back to the chat", async () => {
    const visitor = new Visitor(stack.url);
    for (const path of ["/", "/keys", "/usage", "/admin"]) {
      const res = await visitor.request("GET", path);
      expect(res.status).toBe(302);
      expect(res.headers.get("location")).toBe("/unauthorized");
    }
    const page = await visitor.request("GET", "/unauthorized");
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.text).toContain('href="http://localhost:3080"');
    const api = await visitor.request("GET", "/api/me");
    expect(api.status).toBe(401);
    expect(api.body).toMatchObject({ error: { type: "authentication_error", code: "401" } });
  });

  it("accepts a cookie minted as LibreChat mints it, sets its own httpOnly SameSite=Lax cookie, provisions the user", async () => {
    const userId = stack.mongo.register("first@example.com");
    const { refreshToken } = await stack.mongo.signIn(userId, JWT_REFRESH_SECRET);
    const visitor = new Visitor(stack.url).withChatCookie(refreshToken);
    const res = await visitor.request<Record<string, unknown>>("GET", "/api/me");
    expect(res.status).toBe(200);
    const setCookie = res.headers.getSetCookie().find((c) => c.startsWith("console_session="));
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).not.toMatch(/Secure/i); // served from localhost
    expect(res.body).toMatchObject({
      kind: "chat",
      user_id: userId,
      email: "first@example.com",
      role: "ADMIN", // the first registered chat account
      is_admin: true,
      gateway_url: "http://localhost:4000",
      provisioning_error: null,
      account: { user_id: userId, max_budget: 10, budget_duration: "30d", tpm_limit: 10000, rpm_limit: 60 },
    });
    const gatewayUser = await stack.admin.userInfo(userId);
    expect(gatewayUser.user_info).toMatchObject({
      user_email: "first@example.com",
      user_role: "proxy_admin",
    });
    // The page itself is served (503 here only because this suite runs without a built bundle).
    expect((await visitor.request("GET", "/")).status).not.toBe(302);
  });

  it("refuses an expired JWT, a deleted session, a wrong secret, a replaced token and a deleted user", async () => {
    const userId = stack.mongo.register("refused@example.com");
    const expired = await stack.mongo.signIn(userId, JWT_REFRESH_SECRET, Date.now() - 8 * 24 * 3600_000);
    await expectUnauthorized(expired.refreshToken);

    const loggedOut = await stack.mongo.signIn(userId, JWT_REFRESH_SECRET);
    stack.mongo.logout(loggedOut.sessionId);
    await expectUnauthorized(loggedOut.refreshToken);

    const other = new FakeLibreChatMongo();
    const wrongSecret = await other.signIn(userId, "not-the-chat-secret");
    // Same ids as a real session so that only the signature is wrong.
    const real = await stack.mongo.signIn(userId, JWT_REFRESH_SECRET);
    const forged = await other.signIn(userId, "not-the-chat-secret");
    await expectUnauthorized(wrongSecret.refreshToken);
    await expectUnauthorized(forged.refreshToken);

    // A session whose stored hash is of another token (the chat rotated it) refuses the old token.
    const session = stack.mongo.sessions.find((s) => s._id.toHexString() === real.sessionId);
    if (session === undefined) throw new Error("session missing");
    session.refreshTokenHash = "0".repeat(64);
    await expectUnauthorized(real.refreshToken);

    const gone = await stack.mongo.signIn(userId, JWT_REFRESH_SECRET);
    stack.mongo.deleteUser(userId);
    await expectUnauthorized(gone.refreshToken);
    await expectUnauthorized("not-a-jwt");
  });

  it("signs the user out within 60 s of a chat logout, not before re-checking", async () => {
    const { visitor, sessionId } = await chatVisitor(stack, "logout@example.com");
    stack.mongo.logout(sessionId);
    // Checked less than a minute ago: the session holds without asking the database.
    const reads = stack.mongo.reads;
    expect((await visitor.request("GET", "/api/me")).status).toBe(200);
    expect(stack.mongo.reads).toBe(reads);
    stack.advance(61_000);
    expect((await visitor.request("GET", "/api/me")).status).toBe(401);
    expect((await visitor.request("GET", "/")).headers.get("location")).toBe("/unauthorized");
  });

  it("stays signed in across the chat's own token refresh (same session, new token)", async () => {
    const { visitor, sessionId } = await chatVisitor(stack, "rotate@example.com");
    const rotated = await stack.mongo.refresh(sessionId, JWT_REFRESH_SECRET);
    visitor.withChatCookie(rotated.refreshToken);
    stack.advance(61_000);
    expect((await visitor.request("GET", "/api/me")).status).toBe(200);
  });

  it("signs out when the chat's database is down at revalidation", async () => {
    const { visitor } = await chatVisitor(stack, "dbdown@example.com");
    stack.mongo.unavailable = "connection refused";
    try {
      stack.advance(61_000);
      expect((await visitor.request("GET", "/api/me")).status).toBe(401);
    } finally {
      stack.mongo.unavailable = null;
    }
  });
});

describe("state-changing requests", () => {
  it("refuses a cross-origin POST and a POST without the CSRF token; accepts the page's own", async () => {
    const { visitor } = await chatVisitor(stack, "csrf@example.com");
    const body = { name: "csrf-test" };
    const crossOrigin = await visitor.request("POST", "/api/keys", { body, origin: "https://evil.example" });
    expect(crossOrigin.status).toBe(403);
    expect(crossOrigin.body).toMatchObject({ error: { type: "csrf_error" } });
    const token = visitor.csrfToken;
    visitor.csrfToken = undefined;
    expect((await visitor.request("POST", "/api/keys", { body })).status).toBe(403);
    visitor.csrfToken = "x".repeat(token?.length ?? 10);
    expect((await visitor.request("POST", "/api/keys", { body })).status).toBe(403);
    visitor.csrfToken = token;
    expect((await visitor.request("POST", "/api/keys", { body })).status).toBe(201);
    const keys = await stack.admin.listKeys({ key_alias: "csrf-test", return_full_object: true });
    expect(keys.total_count).toBe(1);
  });
});

describe("operators: master-key sign-in", () => {
  it("refuses a wrong key and a cross-origin sign-in; the right key opens the Admin API only", async () => {
    const visitor = new Visitor(stack.url);
    const wrong = await visitor.request("POST", "/api/admin/login", { body: { master_key: "sk-wrong" } });
    expect(wrong.status).toBe(401);
    const cross = await visitor.request("POST", "/api/admin/login", {
      body: { master_key: MASTER_KEY },
      origin: "https://evil.example",
    });
    expect(cross.status).toBe(403);
    const noOrigin = await visitor.request("POST", "/api/admin/login", {
      body: { master_key: MASTER_KEY },
      origin: null,
    });
    expect(noOrigin.status).toBe(403);
    expect(visitor.cookies.has("console_session")).toBe(false);

    const ok = await visitor.request("POST", "/api/admin/login", { body: { master_key: MASTER_KEY } });
    expect(ok.status).toBe(200);
    const me = await visitor.me();
    expect(me.body).toMatchObject({ kind: "operator", is_admin: true, user_id: null });
    expect((await visitor.request("GET", "/api/admin/users")).status).toBe(200);
    expect((await visitor.request("GET", "/api/keys")).status).toBe(403);
    // The master key never comes back in any response, nor into a log line.
    expect(visitor.seen.join("\n")).not.toContain(MASTER_KEY);
    expect(stack.logs.join("\n")).not.toContain(MASTER_KEY);
  });

  it("idles out after ADMIN_SESSION_IDLE_TIMEOUT_MS without a request", async () => {
    const visitor = new Visitor(stack.url);
    expect(
      (await visitor.request("POST", "/api/admin/login", { body: { master_key: MASTER_KEY } })).status,
    ).toBe(200);
    stack.advance(29 * 60_000);
    expect((await visitor.request("GET", "/api/admin/users")).status).toBe(200);
    stack.advance(30 * 60_000);
    expect((await visitor.request("GET", "/api/admin/users")).status).toBe(401);
  });
});

describe("just-in-time provisioning failures", () => {
  it("shows a refused master key and an unreachable gateway, and completes on the next visit", async () => {
    let mode: "mismatch" | "down" | "ok" = "mismatch";
    const realFetch = globalThis.fetch;
    const flaky: typeof fetch = async (input, init) => {
      if (mode === "down") throw new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } });
      const headers = new Headers(init?.headers);
      if (mode === "mismatch") headers.set("authorization", "Bearer sk-not-the-gateways-key");
      return realFetch(input, { ...init, headers });
    };
    const mongo = new FakeLibreChatMongo();
    const app = await buildApp({
      config: stack.config,
      gateway: new AdminApiClient({ baseUrl: stack.gateway.url, masterKey: MASTER_KEY, fetch: flaky }),
      store: mongo,
      webRoot: null,
    });
    const url = (await app.app.listen({ port: 0, host: "127.0.0.1" })).replace("127.0.0.1", "localhost");
    try {
      const userId = mongo.register("jit@example.com");
      const visitor = new Visitor(url).withChatCookie(
        (await mongo.signIn(userId, JWT_REFRESH_SECRET)).refreshToken,
      );
      const mismatch = await visitor.me();
      expect(mismatch.status).toBe(200);
      expect(mismatch.body).toMatchObject({ account: null, provisioning_error: { kind: "unauthorized" } });
      expect(JSON.stringify(mismatch.body)).toContain("GATEWAY_MASTER_KEY");
      mode = "down";
      expect((await visitor.me()).body).toMatchObject({ provisioning_error: { kind: "unreachable" } });
      mode = "ok";
      const done = await visitor.me();
      expect(done.body).toMatchObject({
        provisioning_error: null,
        account: { user_id: userId, max_budget: 10 },
      });
    } finally {
      await app.app.close();
    }
  });

  it("never resets a budget an administrator raised when the user signs in again", async () => {
    const { userId } = await chatVisitor(stack, "again@example.com");
    await stack.admin.updateUser({ user_id: userId, max_budget: 500 });
    const second = await stack.mongo.signIn(userId, JWT_REFRESH_SECRET);
    const me = await new Visitor(stack.url).withChatCookie(second.refreshToken).me();
    expect(me.body).toMatchObject({ account: { max_budget: 500 } });
  });
});

describe("operations endpoints", () => {
  it("answers /_health {ok:true}, and 503 naming what is down", async () => {
    const ok = await fetch(`${stack.url}/_health`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true });
    stack.mongo.unavailable = "connection refused";
    try {
      const down = await fetch(`${stack.url}/_health`);
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({ ok: false, down: { "chat-database": "connection refused" } });
    } finally {
      stack.mongo.unavailable = null;
    }
  });

  it("exposes Prometheus metrics labelled by route template, never by a client's path", async () => {
    await fetch(`${stack.url}/no-such-path-${Date.now()}`);
    const text = await (await fetch(`${stack.url}/metrics`)).text();
    expect(text).toMatch(
      /console_http_requests_total\{method="GET",route="\/_health",status_code="200"\} \d+/,
    );
    expect(text).toMatch(/console_sign_ins_total\{source="chat",result="ok"\} \d+/);
    expect(text).not.toContain("no-such-path");
  });
});
