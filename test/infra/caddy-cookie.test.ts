/**
 * The reverse proxy's Set-Cookie rewrite, run through the real Caddy (Debian package `caddy`): a stand-in
 * upstream sets cookies the way LibreChat does (host-only, SameSite=Strict); behind the proxy they must come
 * out with the shared domain and SameSite=Lax, once each, other attributes kept. Sites without the rewrite
 * pass cookies through untouched.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/lib/children.js";
import { renderCaddyfile } from "../../infra/caddyfile.js";
import { startCaddy, type TestCaddy } from "../helpers/caddy.js";

const UPSTREAM_COOKIES = [
  "refreshToken=eyJhbGciOiJIUzI1NiJ9.e30.sig; Path=/; Expires=Wed, 01 Jan 2031 00:00:00 GMT; HttpOnly; Secure; SameSite=Strict",
  "token_provider=librechat; Domain=chat.example.com; Path=/; HttpOnly; samesite=strict",
];

let upstream: Server;
let caddy: TestCaddy;
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

  caddy = await startCaddy(
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
    `http://127.0.0.1:${healthPort}/healthz`,
  );
});

afterAll(async () => {
  caddy?.close();
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
