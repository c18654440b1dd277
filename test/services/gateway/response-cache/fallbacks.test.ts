/**
 * The response cache off the main path, through the whole gateway: the in-process LRU (`type: local`) in
 * `default_off` mode, where only `cache: {use-cache: true}` looks up and stores; and Redis going away under a
 * running gateway, after which a call that would have hit goes upstream uncached (never a 500).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import type { TestGateway } from "../../../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";
import { deleteKeys, inspector, REDIS_URL, uniquePrefix, waitFor } from "../../../helpers/redis.js";
import { startTcpProxy, type TcpProxy } from "../../../helpers/tcp-proxy.js";
import { newKey, post, startCachedGateway } from "./harness.js";

let upstream: FakeUpstream;
let db: TestDatabase;
let prefix: string;
const open: TestGateway[] = [];
let proxy: TcpProxy | undefined;

beforeAll(async () => {
  upstream = await startFakeUpstream({ record: false });
  db = await createTestDatabase();
  prefix = uniquePrefix("response-cache-fallbacks");
});
afterAll(async () => {
  await Promise.all(open.map((gw) => gw.close()));
  await proxy?.close();
  await upstream?.close();
  await db?.drop();
  await deleteKeys(prefix);
});

const ask = (gw: TestGateway, key: string, content: string, extra: Record<string, unknown> = {}) =>
  post(gw, key, "/v1/chat/completions", {
    model: "general",
    messages: [{ role: "user", content }],
    ...extra,
  });

describe("type local, mode default_off", () => {
  it("looks up and stores only what asks with use-cache", async () => {
    const gw = await startCachedGateway(upstream, {
      databaseUrl: db.url,
      prefix,
      cacheParams: "    type: local\n    mode: default_off",
    });
    open.push(gw);
    const { key } = await newKey(gw);
    const before = upstream.completions;
    const plain = await ask(gw, key, "off by default");
    expect(plain.headers.get("x-litellm-cache-key")).toBeNull();
    await ask(gw, key, "off by default");
    expect(upstream.completions - before).toBe(2);

    const first = await ask(gw, key, "off by default", { cache: { "use-cache": true } });
    expect(first.headers.get("x-litellm-cache-key")).toMatch(/^[0-9a-f]{64}$/);
    const hit = await ask(gw, key, "off by default", { cache: { "use-cache": true } });
    expect(hit.headers.get("x-litellm-response-cost")).toBe("0");
    expect(upstream.completions - before).toBe(3);
  });
});

describe("Redis gone", () => {
  it("answers uncached through the upstream, with no error", async () => {
    const redisPort = Number(new URL(REDIS_URL).port || 6379);
    proxy = await startTcpProxy(redisPort, new URL(REDIS_URL).hostname);
    const gw = await startCachedGateway(upstream, {
      databaseUrl: db.url,
      prefix,
      redisUrl: `redis://127.0.0.1:${proxy.port}`,
    });
    open.push(gw);
    const { key, token } = await newKey(gw);
    await waitFor("the gateway's Redis link", async () => {
      const ready = await (await fetch(`${gw.url}/health/readiness`)).text();
      return !ready.includes("redis unavailable");
    });
    await (await ask(gw, key, "while Redis is up")).text();
    // The entry is written after the answer: wait until Redis has it, then a repeat is a hit.
    const redis = inspector();
    try {
      await expect.poll(async () => (await redis.keys(`${prefix}rc:*:key:${token}:*`)).length).toBe(1);
    } finally {
      redis.disconnect();
    }
    const before = upstream.completions;
    const hit = await ask(gw, key, "while Redis is up");
    expect(hit.headers.get("x-litellm-response-cost")).toBe("0");
    expect(upstream.completions).toBe(before);

    proxy.cut();
    const after = await ask(gw, key, "while Redis is up");
    expect(after.status).toBe(200);
    expect(Number(after.headers.get("x-litellm-response-cost"))).toBeGreaterThan(0);
    expect(upstream.completions).toBe(before + 1);
  });
});
