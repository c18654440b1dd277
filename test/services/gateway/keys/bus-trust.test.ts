/**
 * The key cache trusts an unbroken invalidation bus (real Postgres and Redis): while the Redis bus has delivered
 * without a break since a key was read, the key is served without any query up to the long refresh age, and a
 * revocation through the admin API still reaches the other instance by its message; once the subscriber link
 * broke, every key read before is refreshed within the short bound again, so a change the bus could have
 * missed (here made in SQL while the link was down) is refused within 2 s.
 */
import type { FastifyInstance } from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { LocalInvalidationBus } from "../../../../services/gateway/src/cache/local-bus.js";
import type { InvalidationBus } from "../../../../services/gateway/src/cache/types.js";
import {
  CachedKeyAuthenticator,
  type KeyCacheSettings,
} from "../../../../services/gateway/src/keys/authenticator.js";
import { countingPool, databasePerTest, type TestDatabase } from "../../../helpers/postgres.js";
import { deleteKeys, REDIS_URL, subscribedRedisBus, uniquePrefix, waitFor } from "../../../helpers/redis.js";
import { startTcpProxy } from "../../../helpers/tcp-proxy.js";
import { adminApp, call, ManualClock, openStore, recordingLogger } from "../store/harness.js";

const prefix = uniquePrefix("keycache");
const { cleanups, database, sqlClient } = databasePerTest();
afterAll(() => deleteKeys(prefix));

/** A Redis bus (through `url`) under this suite's prefix, subscribed; closed after the test. */
const redisBus = (url = REDIS_URL) => subscribedRedisBus(prefix, cleanups, url);

/** Instance A: a store and the admin API on `bus` (makes and revokes keys, publishing the changes). */
async function adminInstance(db: TestDatabase, bus: InvalidationBus): Promise<FastifyInstance> {
  const opened = await openStore(db.url, { bus });
  const app = await adminApp(opened);
  cleanups.push(
    () => opened.store.close(),
    () => app.close(),
  );
  return app;
}

/** Instance B: a key cache whose pool counts the queries it is asked to run. */
function countingCache(db: TestDatabase, bus: InvalidationBus, settings: KeyCacheSettings = {}) {
  const { pool, counter } = countingPool(db.url);
  cleanups.push(() => pool.end());
  const keys = new CachedKeyAuthenticator({
    pool,
    clock: new ManualClock(),
    bus,
    log: recordingLogger(),
    ...settings,
  });
  return { keys, counter };
}

async function makeKey(app: FastifyInstance): Promise<{ key: string; token: string }> {
  const res = await call(app, "POST", "/key/generate", {});
  expect(res.status).toBe(200);
  return res.body as { key: string; token: string };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `authenticate` refuses the key now. */
const refuses = (keys: CachedKeyAuthenticator, key: string) =>
  keys.authenticate(key).then(
    () => false,
    () => true,
  );

describe("the key cache behind a connected Redis bus", () => {
  it("serves a cached key without a query past the short bounds, and still refuses a key revoked on another instance", async () => {
    const db = await database();
    const app = await adminInstance(db, await redisBus());
    // Short bounds of 50/100 ms: the key below is far older than them when it is asked for again.
    const b = countingCache(db, await redisBus(), { refreshAfterMs: 50, maxStaleMs: 100 });
    const { key, token } = await makeKey(app);
    expect((await b.keys.authenticate(key))?.keyHash).toBe(token);
    expect(b.counter.queries).toBe(1);

    await sleep(300);
    for (let i = 0; i < 5; i += 1) expect((await b.keys.authenticate(key))?.keyHash).toBe(token);
    expect(b.counter.queries).toBe(1);

    await call(app, "POST", "/key/delete", { keys: [token] });
    await waitFor("the revocation message to reach b", () => refuses(b.keys, key));
    expect(b.counter.queries).toBe(1); // applied from the message, without reading the database
  });

  it("refreshes keys read before the subscriber link broke within the short bound: a SQL revoke made meanwhile is refused within 2 s", async () => {
    const db = await database();
    const proxy = await startTcpProxy(6379);
    cleanups.push(() => proxy.close());
    const app = await adminInstance(db, await redisBus());
    const bus = await redisBus(`redis://127.0.0.1:${proxy.port}`);
    const b = countingCache(db, bus);
    const { key, token } = await makeKey(app);
    expect((await b.keys.authenticate(key))?.keyHash).toBe(token);
    expect(bus.deliveringSince()).toBeDefined();

    proxy.cut();
    await waitFor("the subscriber link to be seen down", () => bus.deliveringSince() === undefined);
    // A change no message announces (as one published while this link was down would be lost).
    const sql = await sqlClient(db);
    await sql.query("UPDATE keys SET revoked_at = now() WHERE token = $1", [token]);
    proxy.restore();
    await waitFor("resubscribed", () => bus.deliveringSince() !== undefined, 10_000);

    // Fails with the condition's name when the revocation is not refused within the 2 s bound.
    const started = Date.now();
    await waitFor("the SQL revocation to be refused within 2 s", () => refuses(b.keys, key), 2000, 25);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe("background refreshes", () => {
  it("reads every key due for a refresh in one query, and still sees a change made in SQL", async () => {
    const db = await database();
    const app = await adminInstance(db, await redisBus());
    // A bus that cannot vouch for the other instances (a worker of several without Redis): the short ages apply.
    const untrusted = new LocalInvalidationBus(recordingLogger(), { soleInstance: false });
    const b = countingCache(db, untrusted, { refreshAfterMs: 50, maxStaleMs: 60_000 });
    const made = await Promise.all(Array.from({ length: 20 }, () => makeKey(app)));
    for (const { key } of made) await b.keys.authenticate(key);
    expect(b.counter.queries).toBe(20);

    await sleep(100); // every entry is now due for a background refresh
    for (const { key, token } of made) expect((await b.keys.authenticate(key))?.keyHash).toBe(token);
    await waitFor("the background refresh", () => b.counter.queries > 20);
    await sleep(100);
    expect(b.counter.queries).toBe(21);

    const revoked = made[7]!;
    const sql = await sqlClient(db);
    await sql.query("UPDATE keys SET revoked_at = now() WHERE token = $1", [revoked.token]);
    await sleep(100);
    for (const { key } of made) await b.keys.authenticate(key).catch(() => undefined);
    await waitFor("the SQL revocation to be refused", () => refuses(b.keys, revoked.key));
    expect(await refuses(b.keys, made[8]!.key)).toBe(false);
    expect(b.counter.queries).toBe(22);
  });
});
