/**
 * Cheap refusals (real Postgres, real Redis): a flood of distinct bogus keys from one address is refused with
 * 429 after the failure limit without reaching the database, keys in use keep working from that address, other
 * addresses are not blocked, an unknown key is remembered until a key with its hash is made (announced on the
 * bus), and the failure count is shared by instances through Redis.
 */
import { randomBytes } from "node:crypto";
import Fastify, { type FastifyInstance } from "fastify";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import {
  type AuthFailureLimiter,
  createFailureLimiter,
} from "../../../../services/gateway/src/auth/failure-limiter.js";
import { LocalInvalidationBus } from "../../../../services/gateway/src/cache/local-bus.js";
import type { InvalidationBus } from "../../../../services/gateway/src/cache/types.js";
import { gatewayErrorHandler } from "../../../../services/gateway/src/errors/error-handler.js";
import {
  CachedKeyAuthenticator,
  type KeyCacheSettings,
} from "../../../../services/gateway/src/keys/authenticator.js";
import { generateKey, hashKey } from "../../../../services/gateway/src/keys/key-material.js";
import { findKey } from "../../../../services/gateway/src/keys/repository.js";
import { createLimits } from "../../../../services/gateway/src/limits/index.js";
import authPlugin from "../../../../services/gateway/src/plugins/auth.js";
import { countingPool, databasePerTest, type TestDatabase } from "../../../helpers/postgres.js";
import {
  captureLogger,
  deleteKeys,
  REDIS_URL,
  subscribedRedisBus,
  uniquePrefix,
} from "../../../helpers/redis.js";
import { adminApp, call, ManualClock, openStore, recordingLogger } from "../store/harness.js";

const { cleanups, database, sqlClient } = databasePerTest();
const prefix = uniquePrefix("authflood");
afterAll(() => deleteKeys(prefix));

/** A bogus key of the right shape (`sk-` and 40 characters), different every time. */
const bogusKey = () => `sk-${randomBytes(30).toString("base64url").slice(0, 40)}`;

/** A gateway-like app: the auth plugin over a key cache whose pool counts its queries, and GET /whoami. */
async function floodTarget(
  db: TestDatabase,
  failures: AuthFailureLimiter,
  bus: InvalidationBus,
  settings: KeyCacheSettings = {},
) {
  const { pool, counter } = countingPool(db.url);
  const log = recordingLogger();
  const keys = new CachedKeyAuthenticator({ pool, clock: new ManualClock(), bus, log, ...settings });
  const app = Fastify();
  app.setErrorHandler(gatewayErrorHandler(1024 * 1024));
  await app.register(authPlugin, { masterKey: undefined, keys, failures });
  app.get("/whoami", async (request) => ({ kind: request.auth?.kind }));
  await app.ready();
  cleanups.push(
    () => pool.end(),
    () => app.close(),
  );
  return { app, keys, counter };
}

/** An admin instance on `db` (makes keys, publishing them on `bus`). */
async function admin(db: TestDatabase, bus: InvalidationBus): Promise<FastifyInstance> {
  const opened = await openStore(db.url, { bus });
  const app = await adminApp(opened);
  cleanups.push(
    () => opened.store.close(),
    () => app.close(),
  );
  return app;
}

/** A Redis bus under this suite's prefix, subscribed (one per gateway instance); closed after the test. */
const redisBus = () => subscribedRedisBus(prefix, cleanups);

const whoami = (app: FastifyInstance, key: string, remoteAddress = "203.0.113.7") =>
  app.inject({ method: "GET", url: "/whoami", headers: { authorization: `Bearer ${key}` }, remoteAddress });

describe("a flood of distinct bogus keys", () => {
  it("costs fewer than 1,000 database queries for 50,000 keys, while a key in use and keys made a moment ago on another instance work from the same address", async () => {
    const db = await database();
    // Two instances on one Redis: A makes keys, B is flooded.
    const [busA, busB] = [await redisBus(), await redisBus()];
    const instanceA = await admin(db, busA);
    const made = await call(instanceA, "POST", "/key/generate", {});
    const failures = createFailureLimiter({ limit: 20, clock: new ManualClock() });
    const { app, counter } = await floodTarget(db, failures, busB);
    expect((await whoami(app, made.body.key)).statusCode).toBe(200);
    let fresh = 0;

    const statuses = new Map<number, number>();
    let retryAfter: string | undefined;
    // 250 rounds of 200 concurrent requests; the first round alone may pass the limit.
    for (let round = 0; round < 250; round += 1) {
      const answers = await Promise.all(Array.from({ length: 200 }, () => whoami(app, bogusKey())));
      for (const res of answers) {
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode === 429) retryAfter ??= res.headers["retry-after"] as string;
      }
      if (round === 125) expect((await whoami(app, made.body.key)).statusCode).toBe(200);
      if (round % 25 === 10) {
        // Made on A a moment ago, used at once on B from the limited address (its message may be in flight).
        const newKey = await call(instanceA, "POST", "/key/generate", {});
        expect((await whoami(app, newKey.body.key)).statusCode, `round ${round}`).toBe(200);
        fresh += 1;
      }
    }
    expect(fresh).toBe(10);
    expect(counter.queries).toBeLessThan(1000);
    // The first round's lookups all start before its failures are counted; after it, every answer is 429.
    const refused = statuses.get(401) ?? 0;
    expect(refused).toBeGreaterThanOrEqual(20);
    expect(refused).toBeLessThanOrEqual(200);
    expect(statuses.get(429)).toBe(50_000 - refused);
    console.info(
      `50,000 bogus keys and 10 new keys: ${counter.queries} database queries, ${refused} answered 401, the rest 429`,
    );
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    // Another address is not blocked: its unknown key is looked up and refused with 401.
    expect((await whoami(app, bogusKey(), "198.51.100.9")).statusCode).toBe(401);
  }, 300_000);

  it("refuses a token without a key's format before any lookup", async () => {
    const db = await database();
    const failures = createFailureLimiter({ limit: 0, clock: new ManualClock() });
    const { app, counter } = await floodTarget(db, failures, new LocalInvalidationBus());
    for (const token of ["sk-short", `sk-${"é".repeat(30)}`, `sk-${"a".repeat(300)}`, "Bearer-like-token"]) {
      expect((await whoami(app, token)).statusCode).toBe(401);
    }
    expect(counter.queries).toBe(0);
  });

  it("remembers an unknown key until a key with its hash is made and announced on the bus", async () => {
    const db = await database();
    const bus = new LocalInvalidationBus();
    await admin(db, bus); // the schema
    const failures = createFailureLimiter({ limit: 0, clock: new ManualClock() });
    const { app, counter } = await floodTarget(db, failures, bus);
    const key = generateKey();
    expect((await whoami(app, key)).statusCode).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past the untrusted 1 s negative age
    expect((await whoami(app, key)).statusCode).toBe(401);
    expect(counter.queries).toBe(1);

    const sql = await sqlClient(db);
    await sql.query(
      "INSERT INTO keys (token, key_name, metadata, created_at, updated_at) VALUES ($1, 'sk-…', '{}', now(), now())",
      [hashKey(key)],
    );
    const record = await findKey(sql, hashKey(key));
    expect(record).not.toBeNull();
    await bus.publish({ kind: "key", key: record! });
    expect((await whoami(app, key)).statusCode).toBe(200);
    expect(counter.queries).toBe(2);
  });
});

describe("a limited address while the bus cannot vouch for the known-key filter", () => {
  it("gets one lookup per grace interval: a real key made elsewhere gets through, and bogus keys cost nothing more", async () => {
    const db = await database();
    await admin(db, new LocalInvalidationBus()); // the schema
    // One of several workers without Redis: the bus reaches no sibling, so keys made elsewhere go unannounced.
    const bus = new LocalInvalidationBus(undefined, { soleInstance: false });
    const failures = createFailureLimiter({ limit: 20, clock: new ManualClock() });
    const { app, counter } = await floodTarget(db, failures, bus, {
      knownKeys: { graceIntervalMs: 600_000, reloadEveryMs: 600_000 },
    });
    const sql = await sqlClient(db);
    const insertKey = async () => {
      const key = generateKey();
      await sql.query(
        "INSERT INTO keys (token, key_name, metadata, created_at, updated_at) VALUES ($1, 'sk-…', '{}', now(), now())",
        [hashKey(key)],
      );
      return key;
    };
    const before = await insertKey();
    for (let i = 0; i < 20; i += 1) expect((await whoami(app, bogusKey())).statusCode).toBe(401);
    expect(counter.queries).toBe(20);
    // The first limited request reads the filter (one query), which holds the key made before: found.
    expect((await whoami(app, before)).statusCode).toBe(200);
    expect(counter.queries).toBe(22);
    // Made after the read, unannounced: the interval's one lookup finds it.
    expect((await whoami(app, await insertKey())).statusCode).toBe(200);
    expect(counter.queries).toBe(23);
    // The next one waits for the next interval (or the filter's next read); bogus keys cost nothing.
    expect((await whoami(app, await insertKey())).statusCode).toBe(429);
    const answers = await Promise.all(Array.from({ length: 1000 }, () => whoami(app, bogusKey())));
    expect(answers.every((res) => res.statusCode === 429)).toBe(true);
    expect(counter.queries).toBe(23);
  });
});

describe("the failure limit", () => {
  it("is shared by instances through Redis", async () => {
    const clock = new ManualClock();
    const limiters = [0, 1].map(() => {
      const limits = createLimits({
        redisUrl: REDIS_URL,
        keyPrefix: prefix,
        clock,
        log: captureLogger(),
        registry: new Registry(),
      });
      cleanups.push(() => limits.close());
      return { limits, failures: createFailureLimiter({ limit: 3, clock, redis: limits.redis }) };
    });
    for (const { limits } of limiters) {
      const started = Date.now();
      while (!limits.redis?.isConnected() && Date.now() - started < 5000) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    const [a, b] = limiters.map((l) => l.failures) as [AuthFailureLimiter, AuthFailureLimiter];
    await a.recordFailure("203.0.113.7");
    await a.recordFailure("203.0.113.7");
    expect(a.blockedFor("203.0.113.7")).toBe(0);
    await b.recordFailure("203.0.113.7");
    expect(b.blockedFor("203.0.113.7")).toBeGreaterThan(0);
    expect(b.blockedFor("198.51.100.9")).toBe(0);
    clock.advance(60_000);
    expect(b.blockedFor("203.0.113.7")).toBe(0);
  });

  it("without Redis counts in process and ends with the minute", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 15, 12, 0, 0));
    const failures = createFailureLimiter({ limit: 2, clock });
    await failures.recordFailure("a");
    expect(failures.blockedFor("a")).toBe(0);
    clock.advance(30_000);
    await failures.recordFailure("a");
    expect(failures.blockedFor("a")).toBe(30);
    clock.advance(30_000);
    expect(failures.blockedFor("a")).toBe(0);
    await failures.recordFailure("a");
    expect(failures.blockedFor("a")).toBe(0);
  });
});
