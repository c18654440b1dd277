/**
 * The reverse proxy's Set-Cookie rewrite, run through the real Caddy (Debian package `caddy`): a stand-in
 * upstream sets cookies the way LibreChat does (host-only, SameSite=Strict); behind the proxy they must come
 * out with the shared domain and SameSite=Lax, once each, other attributes kept. Sites without the rewrite
 * pass cookies through untouched.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/lib/children.js";
import { renderCaddyfile } from "../../infra/caddyfile.js";

const UPSTREAM_COOKIES = [
  "refreshToken=eyJhbGciOiJIUzI1NiJ9.e30.sig; Path=/; Expires=Wed, 01 Jan 2031 00:00:00 GMT; HttpOnly; Secure; SameSite=Strict",
  "token_provider=librechat; Domain=chat.example.com; Path=/; HttpOnly; samesite=strict",
];

let upstream: Server;
let caddy: ChildProcess;
let rewritePort: number;
let plainPort: number;

beforeAll(async () => {
  upstream = createServer((_req, res) => {
    res.setHeader("Set-Cookie", UPSTREAM_COOKIES);
    res.end("OK");
  });
  await new Promise<void>((done) => upstream.listen(0, "127.0.0.1", done));
  const upstreamPort = (upstream.address() as AddressInfo).port;
  [rewritePort, plainPort] = [await freePort(), await freePort()];
  const healthPort = await freePort();

  const dir = mkdtempSync(path.join(tmpdir(), "caddy-cookie-"));
  const file = path.join(dir, "Caddyfile");
  writeFileSync(
    file,
    renderCaddyfile({
      sites: [
        {
          address: `http://127.0.0.1:${rewritePort}`,
          upstream: `127.0.0.1:${upstreamPort}`,
          sharedCookie: true,
        },
        {
          address: `http://127.0.0.1:${plainPort}`,
          upstream: `127.0.0.1:${upstreamPort}`,
          sharedCookie: false,
        },
      ],
      cookieDomain: ".example.com",
      healthPort,
    }),
  );
  caddy = spawn("caddy", ["run", "--adapter", "caddyfile", "--config", file], {
    env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
    stdio: "ignore",
  });
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${healthPort}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline || caddy.exitCode !== null) throw new Error("caddy did not start");
    await new Promise((r) => setTimeout(r, 100));
  }
});

afterAll(async () => {
  caddy?.kill("SIGTERM");
  await new Promise((done) => upstream?.close(done));
});

describe("reverse proxy cookie rewrite (real Caddy)", () => {
  it("moves the chat's cookies to the shared domain with SameSite=Lax", async () => {
    const cookies = (await fetch(`http://127.0.0.1:${rewritePort}/api/auth/login`)).headers.getSetCookie();
    expect(cookies).toEqual([
      "refreshToken=eyJhbGciOiJIUzI1NiJ9.e30.sig; Path=/; Expires=Wed, 01 Jan 2031 00:00:00 GMT; HttpOnly; Secure; Domain=.example.com; SameSite=Lax",
      "token_provider=librechat; Path=/; HttpOnly; Domain=.example.com; SameSite=Lax",
    ]);
  });

  it("leaves cookies of other sites alone", async () => {
    const cookies = (await fetch(`http://127.0.0.1:${plainPort}/`)).headers.getSetCookie();
    expect(cookies).toEqual(UPSTREAM_COOKIES);
  });
});
