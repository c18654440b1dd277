/**
 * What the console sends around its pages, against a real gateway: the app's HTML is revalidated on every
 * visit (`no-cache`, so a redeploy never leaves a page naming assets that are gone) while hashed assets are
 * `immutable`; every answer carries the security headers (CSP with frame-ancestors, referrer policy); a
 * favicon is served; the master-key sign-in is rate-limited; the console API caps a key's lifetime at a
 * year as the form does; a duplicate key name is refused once, in the user's terms.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsoleStack,
  chatVisitor,
  JWT_REFRESH_SECRET,
  startConsoleStack,
  Visitor,
} from "../../helpers/console.js";

let stack: ConsoleStack;
let webRoot: string;
let alice: Visitor;

beforeAll(async () => {
  // A stand-in for the built bundle: an index.html naming one hashed asset.
  webRoot = mkdtempSync(join(tmpdir(), "console-web-"));
  mkdirSync(join(webRoot, "assets"));
  writeFileSync(join(webRoot, "assets", "index-AbCd1234.js"), "console.log('app');\n");
  writeFileSync(
    join(webRoot, "index.html"),
    '<!doctype html><html><head><script type="module" src="/assets/index-AbCd1234.js"></script></head></html>',
  );
  stack = await startConsoleStack({ webRoot });
  ({ visitor: alice } = await chatVisitor(stack, "alice@example.com"));
});
afterAll(async () => {
  await stack?.close();
  rmSync(webRoot, { recursive: true, force: true });
});

describe("caching", () => {
  it("sends the app's HTML no-cache on every page and hashed assets immutable for a year", async () => {
    for (const path of ["/", "/profile", "/usage", "/keys", "/admin", "/admin/login"]) {
      const res = await alice.request("GET", path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type"), path).toMatch(/^text\/html/);
      expect(res.headers.get("cache-control"), path).toBe("no-cache");
    }
    const asset = await alice.request("GET", "/assets/index-AbCd1234.js");
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  });
});

describe("security headers and favicon", () => {
  it("sends a CSP with frame-ancestors, a referrer policy and nosniff on pages and the API", async () => {
    for (const path of ["/keys", "/unauthorized", "/api/me"]) {
      const res = await (path === "/unauthorized" ? new Visitor(stack.url) : alice).request("GET", path);
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).toContain("default-src 'self'");
      expect(res.headers.get("referrer-policy"), path).toBe("same-origin");
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
    }
  });

  it("serves a favicon without a session, and the pages link it", async () => {
    const res = await new Visitor(stack.url).request("GET", "/favicon.svg");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    expect(res.text).toContain("<svg");
    const page = await new Visitor(stack.url).request("GET", "/unauthorized");
    expect(page.text).toContain('<link rel="icon" href="/favicon.svg"');
  });
});

describe("master-key sign-in", () => {
  it("refuses wrong keys with 401, then 429 with retry-after after 5 tries a minute from one address", async () => {
    const visitor = new Visitor(stack.url);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await visitor.request("POST", "/api/admin/login", {
        body: { master_key: `sk-wrong-${i}` },
      });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(res.body).toMatchObject({ error: { type: "rate_limit_error", code: "429" } });
      }
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
  });
});

describe("the console API's key rules", () => {
  it("caps a key's lifetime at a year, as the form does", async () => {
    const res = await alice.request("POST", "/api/keys", { body: { name: "forever", duration: "36500d" } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { param: "duration", type: "invalid_request_error" } });
    expect((res.body as { error: { message: string } }).error.message).toContain("1 year");
    const year = await alice.request("POST", "/api/keys", { body: { name: "yearly", duration: "365d" } });
    expect(year.status).toBe(201);
  });

  it("refuses a second active key with the same name, in the user's terms", async () => {
    expect((await alice.request("POST", "/api/keys", { body: { name: "laptop" } })).status).toBe(201);
    const again = await alice.request("POST", "/api/keys", { body: { name: "laptop" } });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: { param: "name" } });
    const message = (again.body as { error: { message: string } }).error.message;
    expect(message).toBe(
      'You already have an active key named "laptop". Choose another name or revoke that key.',
    );
  });
});

describe("sign out", () => {
  it("stays signed out on the next visit with the same chat session, until the user signs in again", async () => {
    const { visitor, userId } = await chatVisitor(stack, "leaver@example.com");
    expect((await visitor.request("POST", "/api/logout")).status).toBe(200);
    const next = await visitor.request("GET", "/keys");
    expect(next.status).toBe(302);
    expect(next.headers.get("location")).toBe("/unauthorized");
    expect((await visitor.request("GET", "/api/me")).status).toBe(401);
    const page = await visitor.request("GET", "/unauthorized");
    expect(page.text).toContain("You signed out of the console");
    // "Sign in again" (a form on that page) resumes with the chat session.
    const again = await visitor.request("POST", "/signin");
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe("/");
    expect((await visitor.me()).status).toBe(200);
    // A new chat sign-in (another chat session) also signs in again.
    expect((await visitor.request("POST", "/api/logout")).status).toBe(200);
    const { refreshToken } = await stack.mongo.signIn(userId, JWT_REFRESH_SECRET);
    visitor.withChatCookie(refreshToken);
    expect((await visitor.me()).status).toBe(200);
  });
});
