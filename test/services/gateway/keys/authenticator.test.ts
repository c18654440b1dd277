import type { FastifyInstance } from "fastify";
import { describe, expect, it } from "vitest";
import { LocalInvalidationBus } from "../../../../services/gateway/src/cache/local-bus.js";
import { generateKey, hashKey, keyDisplayName } from "../../../../services/gateway/src/keys/key-material.js";
import type { Store } from "../../../../services/gateway/src/store/index.js";
import { openLimits } from "../../../helpers/limits.js";
import { databasePerTest } from "../../../helpers/postgres.js";
import { deleteKeys, uniquePrefix, waitFor } from "../../../helpers/redis.js";
import { adminApp, call, ManualClock, openStore, spendRow } from "../store/harness.js";

const DAY = 86_400_000;
const { cleanups, database, proxyTo, sqlClient } = databasePerTest();

async function instance(url: string, options: Parameters<typeof openStore>[1] = {}) {
  const opened = await openStore(url, options);
  const app = await adminApp(opened);
  cleanups.push(
    () => opened.store.close(),
    () => app.close(),
  );
  return { ...opened, app };
}

async function makeKey(app: FastifyInstance, body: Record<string, unknown> = {}) {
  const res = await call(app, "POST", "/key/generate", body);
  expect(res.status).toBe(200);
  return res.body as { key: string; token: string };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `authenticate` refuses the key; resolves with the ms it took. */
async function msUntilRefused(store: Store, key: string, limitMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    try {
      await store.keys.authenticate(key);
    } catch {
      return Date.now() - started;
    }
    await sleep(25);
  }
  return Number.POSITIVE_INFINITY;
}

describe("key material", () => {
  it("makes sk- keys of 40 base62 characters, all different, and displays them as sk-…abcd", () => {
    const keys = new Set(Array.from({ length: 200 }, generateKey));
    expect(keys.size).toBe(200);
    for (const key of keys) expect(key).toMatch(/^sk-[0-9A-Za-z]{40}$/);
    expect(keyDisplayName("sk-abcdefghijklmnopqrstuvwxyz1234")).toBe("sk-…1234");
    expect(hashKey("sk-x")).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("authentication", () => {
  it("returns null for unknown and malformed keys", async () => {
    const { store } = await instance((await database()).url);
    expect(await store.keys.authenticate(generateKey())).toBeNull();
    expect(await store.keys.authenticate("not-a-key")).toBeNull();
  });

  it("refuses a key past its expiry per the injected clock with 401 expired_key", async () => {
    const clock = new ManualClock();
    const { store, app } = await instance((await database()).url, { clock });
    const { key } = await makeKey(app, { duration: "1h" });
    expect(await store.keys.authenticate(key)).not.toBeNull();
    clock.advance(3_600_000 - 1);
    expect(await store.keys.authenticate(key)).not.toBeNull();
    clock.advance(1);
    await expect(store.keys.authenticate(key)).rejects.toMatchObject({ status: 401, type: "expired_key" });
  });

  it("rolls a budget period over per the clock before the row is updated, and persists it on the next write", async () => {
    const clock = new ManualClock();
    const db = await database();
    const { store, app } = await instance(db.url, { clock, keyCache: { refreshAfterMs: 0, maxStaleMs: 0 } });
    await call(app, "POST", "/user/new", { user_id: "period", max_budget: 10, budget_duration: "30d" });
    const made = await makeKey(app, { user_id: "period", max_budget: 5, budget_duration: "1d" });
    const firstReset = clock.now() + DAY;
    store.spend.record(spendRow({ keyHash: made.token, userId: "period", spend: 2, endTime: clock.now() }));
    await store.spend.flush();

    const before = await store.keys.authenticate(made.key);
    expect(before?.subjects[0]).toMatchObject({
      scope: "key",
      spend: 2,
      budgetResetAt: firstReset,
      maxBudget: 5,
    });
    expect(before?.subjects[1]).toMatchObject({ scope: "user", id: "period", spend: 2 });

    clock.advance(DAY + 1000);
    const after = await store.keys.authenticate(made.key);
    expect(after?.subjects[0]).toMatchObject({ spend: 0, budgetResetAt: firstReset + DAY });
    expect(after?.subjects[1]).toMatchObject({ spend: 2 });
    const stored = await call(app, "GET", `/key/info?key=${made.token}`);
    expect(stored.body.info).toMatchObject({
      spend: 0,
      budget_reset_at: new Date(firstReset + DAY).toISOString(),
    });

    store.spend.record(spendRow({ keyHash: made.token, userId: "period", spend: 0.5, endTime: clock.now() }));
    // A row that ended in the previous period is logged but not counted in the new one.
    store.spend.record(
      spendRow({ keyHash: made.token, userId: "period", spend: 1, endTime: firstReset - 1 }),
    );
    await store.spend.flush();
    const client = await sqlClient(db);
    const row = await client.query("SELECT spend, budget_reset_at FROM keys WHERE token = $1", [made.token]);
    expect(row.rows[0].spend).toBe("0.5");
    expect(row.rows[0].budget_reset_at.getTime()).toBe(firstReset + DAY);
    const user = await client.query("SELECT spend FROM users WHERE user_id = 'period'");
    expect(user.rows[0].spend).toBe("3.5");
  });

  it("sees a user's new limits at once through the bus", async () => {
    const { store, app } = await instance((await database()).url);
    await call(app, "POST", "/user/new", { user_id: "limits", rpm_limit: 50 });
    const { key } = await makeKey(app, { user_id: "limits" });
    expect((await store.keys.authenticate(key))?.subjects[1]?.rpmLimit).toBe(50);
    await call(app, "POST", "/user/update", { user_id: "limits", rpm_limit: 7 });
    expect((await store.keys.authenticate(key))?.subjects[1]?.rpmLimit).toBe(7);
  });
});

describe("two instances on one database", () => {
  it("revocation on one is refused on the other at once when the bus is shared", async () => {
    const db = await database();
    const bus = new LocalInvalidationBus();
    const a = await instance(db.url, { bus });
    const b = await instance(db.url, { bus, keyCache: { refreshAfterMs: 60_000, maxStaleMs: 60_000 } });
    const { key, token } = await makeKey(a.app);
    expect((await b.store.keys.authenticate(key))?.keyHash).toBe(token);
    await call(a.app, "POST", "/key/delete", { keys: [token] });
    await expect(b.store.keys.authenticate(key)).rejects.toMatchObject({ status: 401 });
  });

  it("revocation on one is refused on the other within 2 s by the cache TTL alone when no bus joins them (workers without Redis)", async () => {
    const db = await database();
    const a = await instance(db.url);
    // Its own in-process bus, as in one of several workers without Redis: no message reaches it, and the bus
    // says so, so the short refresh ages apply.
    const b = await instance(db.url, { bus: new LocalInvalidationBus(undefined, { soleInstance: false }) });
    const { key, token } = await makeKey(a.app);
    expect((await b.store.keys.authenticate(key))?.keyHash).toBe(token);
    await call(a.app, "POST", "/key/delete", { keys: [token] });
    expect(await msUntilRefused(b.store, key, 5000)).toBeLessThan(2000);
  });
});

describe("database outage", () => {
  it("keeps serving known keys, refuses unknown ones with 503, and recovers", async () => {
    const db = await database();
    const proxy = await proxyTo(db);
    const { store, app } = await instance(db.urlVia(proxy.port), {
      keyCache: { refreshAfterMs: 50, maxStaleMs: 100, outageBackoffMs: 100 },
    });
    const { key, token } = await makeKey(app);
    expect((await store.keys.authenticate(key))?.keyHash).toBe(token);

    proxy.cut();
    for (let i = 0; i < 5; i += 1) {
      await sleep(120);
      expect((await store.keys.authenticate(key))?.keyHash).toBe(token);
    }
    await expect(store.keys.authenticate(generateKey())).rejects.toMatchObject({ status: 503 });

    proxy.restore();
    const fresh = await makeKey(app);
    expect((await store.keys.authenticate(fresh.key))?.keyHash).toBe(fresh.token);
  });
});

describe("a database that hangs (packets dropped, nothing refused)", () => {
  it("serves a known key from cache while the reload hangs, and answers an unknown key 503 after a bounded wait", async () => {
    const db = await database();
    const proxy = await proxyTo(db);
    const { store, app } = await instance(db.urlVia(proxy.port), {
      keyCache: { refreshAfterMs: 50, maxStaleMs: 100 },
    });
    const known = await makeKey(app);
    const notYetSeen = await makeKey(app);
    expect((await store.keys.authenticate(known.key))?.keyHash).toBe(known.token);
    await sleep(150); // older than maxStaleMs: due for a refresh before answering

    proxy.stall();
    // Every call below resolves while the database still hangs (its query timeout is 15 s).
    for (let i = 0; i < 3; i += 1) {
      expect((await store.keys.authenticate(known.key))?.keyHash).toBe(known.token);
    }
    const refusal = await store.keys.authenticate(notYetSeen.key).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ status: 503, code: "key_store_unreachable" });
    expect((refusal as Error).message).toContain("key store (Postgres) is unreachable");

    proxy.restore();
    await waitFor("the held lookup to finish", async () => {
      try {
        return (await store.keys.authenticate(notYetSeen.key))?.keyHash === notYetSeen.token;
      } catch {
        return false;
      }
    });
  }, 10_000);
});

describe("an instance cut off from Postgres", () => {
  it("refuses a key revoked on another instance, and applies a lowered budget, from the message alone", async () => {
    const db = await database();
    const proxy = await proxyTo(db);
    const prefix = uniquePrefix("partition");
    const clock = new ManualClock();
    const [busA, busB] = [await openLimits(clock, prefix), await openLimits(clock, prefix)];
    cleanups.push(
      () => deleteKeys(prefix),
      () => busA.close(),
      () => busB.close(),
    );
    const a = await instance(db.url, { bus: busA.bus, clock });
    const b = await instance(db.urlVia(proxy.port), { bus: busB.bus, clock });
    await call(a.app, "POST", "/user/new", { user_id: "cut-off", max_budget: 100 });
    const { key, token } = await makeKey(a.app, { user_id: "cut-off" });
    const other = await makeKey(a.app, { user_id: "cut-off" });
    expect((await b.store.keys.authenticate(key))?.keyHash).toBe(token);
    expect((await b.store.keys.authenticate(other.key))?.subjects[1]?.maxBudget).toBe(100);

    proxy.cut();
    await call(a.app, "POST", "/user/update", { user_id: "cut-off", max_budget: 5 });
    await call(a.app, "POST", "/key/delete", { keys: [token] });
    await waitFor(
      "the revoked key refused on the cut-off instance",
      () =>
        b.store.keys.authenticate(key).then(
          () => false,
          (error: { status?: number }) => error.status === 401,
        ),
      2000,
    );
    expect((await b.store.keys.authenticate(other.key))?.subjects[1]?.maxBudget).toBe(5);
  });
});
