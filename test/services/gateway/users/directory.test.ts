/**
 * The chat user cache (users/directory.ts) on a real Postgres: one provisioning query per new user however
 * many calls arrive at once, change messages applied without a query, and a database that goes away (known
 * users keep being served, a new user gets 503 within the wait), and no refresh query while the bus has
 * delivered without a break since the user was read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalInvalidationBus } from "../../../../services/gateway/src/cache/local-bus.js";
import { migrate } from "../../../../services/gateway/src/db/migrate.js";
import { createPool } from "../../../../services/gateway/src/db/pool.js";
import { GatewayError } from "../../../../services/gateway/src/errors/gateway-error.js";
import { UserDirectory } from "../../../../services/gateway/src/users/directory.js";
import { updateUser } from "../../../../services/gateway/src/users/repository.js";
import { countingPool, createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";
import { waitFor } from "../../../helpers/redis.js";
import { startTcpProxy, type TcpProxy } from "../../../helpers/tcp-proxy.js";
import { ManualClock, recordingLogger, userDefaults } from "../store/harness.js";

let db: TestDatabase;
let proxy: TcpProxy;
const log = recordingLogger();
const clock = new ManualClock();
const bus = new LocalInvalidationBus();
let pool: ReturnType<typeof createPool>;
let directory: UserDirectory;

beforeAll(async () => {
  db = await createTestDatabase();
  proxy = await startTcpProxy(db.port);
  pool = createPool(db.urlVia(proxy.port), log);
  await migrate(pool, log);
  directory = new UserDirectory({ pool, clock, bus, log, userDefaults, unknownUserWaitMs: 500 });
});
afterAll(async () => {
  proxy.restore();
  await pool?.end();
  await proxy?.close();
  await db?.drop();
});

describe("UserDirectory", () => {
  it("provisions a new user once with the defaults, however many calls name it at once", async () => {
    const users = await Promise.all(
      Array.from({ length: 20 }, () => directory.resolve("burst-user", "burst@example.com")),
    );
    expect(new Set(users.map((u) => u.userId))).toEqual(new Set(["burst-user"]));
    expect(users[0]).toMatchObject({ userEmail: "burst@example.com", maxBudget: 10, rpmLimit: 60 });
    expect(log.lines.filter((l) => l.includes("chat user provisioned")).length).toBe(1);
    const rows = await pool.query("SELECT count(*)::int AS n FROM users WHERE user_id = 'burst-user'");
    expect(rows.rows[0].n).toBe(1);
  });

  it("applies a change message to the cached user without reading the database", async () => {
    const before = await directory.resolve("changed-user", null);
    proxy.cut();
    try {
      await bus.publish({
        kind: "user",
        user: { ...before, maxBudget: 0.5, updatedAt: before.updatedAt + 1 },
      });
      expect((await directory.resolve("changed-user", null)).maxBudget).toBe(0.5);
    } finally {
      proxy.restore();
    }
  });

  it("serves known users while Postgres is unreachable; a new user gets 503 user_store_unreachable", async () => {
    // The previous test cut the pool's connections: the first query may meet one of them.
    await expect.poll(() => directory.resolve("known-user", null).then((u) => u.userId)).toBe("known-user");
    proxy.stall();
    try {
      expect((await directory.resolve("known-user", null)).userId).toBe("known-user");
      const refused = await directory.resolve("new-user", null).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(GatewayError);
      expect(refused).toMatchObject({ status: 503, code: "user_store_unreachable" });
    } finally {
      proxy.restore();
    }
    // Once the database answers again the new user is provisioned.
    await expect.poll(() => directory.resolve("new-user", null).then((u) => u.userId)).toBe("new-user");
  });
});

describe("UserDirectory refresh", () => {
  /** A directory with a short refresh age of 50 ms on `bus`, whose pool counts its queries. */
  function countingDirectory(bus: LocalInvalidationBus) {
    const { pool: counted, counter } = countingPool(db.url, 1);
    const users = new UserDirectory({ pool: counted, clock, bus, log, userDefaults, refreshAfterMs: 50 });
    return { users, counter, end: () => counted.end() };
  }

  it("reads a cached user again after the short age only while the bus may have missed a message", async () => {
    const trusted = countingDirectory(new LocalInvalidationBus());
    const untrusted = countingDirectory(new LocalInvalidationBus(undefined, { soleInstance: false }));
    try {
      for (const { users } of [trusted, untrusted]) await users.resolve("refreshed-user", null);
      const [trustedReads, untrustedReads] = [trusted.counter.queries, untrusted.counter.queries];
      await new Promise((resolve) => setTimeout(resolve, 150));
      for (const { users } of [trusted, untrusted]) await users.resolve("refreshed-user", null);
      await waitFor("the background refresh", () => untrusted.counter.queries > untrustedReads);
      expect(trusted.counter.queries).toBe(trustedReads);
    } finally {
      await trusted.end();
      await untrusted.end();
    }
  });

  it("reads a user again soon when a change message arrived while its first query ran", async () => {
    const before = await directory.resolve("raced-user", null);
    // A directory that has not cached the user yet; its first read of the user returns the state from before an
    // admin change, and the change's message arrives before that read is cached (so there is no entry to apply
    // it to). The bus delivered without a break all along, so only the race tells the directory to read again.
    const counted = createPool(db.url, log);
    const query = counted.query.bind(counted) as (...args: unknown[]) => Promise<unknown>;
    let raced = false;
    Object.assign(counted, {
      query: async (...args: unknown[]) => {
        const result = await query(...args);
        if (!raced) {
          raced = true;
          const changed = await updateUser(pool, "raced-user", { max_budget: 7 }, clock.now() + 60_000);
          if (changed !== null) await bus.publish({ kind: "user", user: changed });
        }
        return result;
      },
    });
    const users = new UserDirectory({ pool: counted, clock, bus, log, userDefaults });
    try {
      expect((await users.resolve("raced-user", null)).maxBudget).toBe(before.maxBudget);
      await waitFor(
        "the changed budget",
        async () => (await users.resolve("raced-user", null)).maxBudget === 7,
      );
    } finally {
      await counted.end();
    }
  });
});
