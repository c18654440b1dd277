/**
 * The response ownership registry on a real Postgres (migration 6, `response_owners`): a record made on one
 * gateway instance is found by another at once (the write is batched, and a miss is read again after a wait);
 * records live for the upstream's 30-day retention, are ignored after it and swept; an id that is not cached
 * while the database is unreachable is refused with a 503 (ownership is never assumed), while cached ones still
 * answer.
 */
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { migrate } from "../../../../services/gateway/src/db/migrate.js";
import { createPool } from "../../../../services/gateway/src/db/pool.js";
import { ResponseOwnerStore } from "../../../../services/gateway/src/response-owners/store.js";
import { RESPONSE_RETENTION_MS } from "../../../../services/gateway/src/response-owners/types.js";
import { databasePerTest } from "../../../helpers/postgres.js";
import { captureLogger } from "../../../helpers/redis.js";

const dbs = databasePerTest();
const log = captureLogger();
const owner = { keyHash: "a".repeat(64), userId: "user-a", teamId: null };

/** A clock the test moves. */
const clockAt = (ms: number) => ({
  at: ms,
  now() {
    return this.at;
  },
});

/** The gateway's pool on a new database with the gateway's schema, closed after the test. */
async function migratedPool(): Promise<pg.Pool> {
  const db = await dbs.database();
  const pool = createPool(db.url, log);
  dbs.cleanups.push(() => pool.end());
  await migrate(pool, log);
  return pool;
}

describe("response owners in Postgres", () => {
  it("a record made on one instance is found by another right after (the batched write is waited for)", async () => {
    const pool = await migratedPool();
    const clock = clockAt(Date.now());
    // The writer holds its batch a while; the reader's first read misses and the second finds the row.
    const writer = new ResponseOwnerStore({ clock, pool, flushDelayMs: 50 });
    const reader = new ResponseOwnerStore({ clock, pool, missWaitMs: 2000 });
    writer.record("resp_shared_1", owner, "deployment-1");
    expect(await reader.lookup("resp_shared_1")).toEqual({
      owner,
      deploymentId: "deployment-1",
      expiresAt: clock.at + RESPONSE_RETENTION_MS,
    });
    const row = await pool.query("SELECT key_hash, user_id, team_id, deployment_id FROM response_owners");
    expect(row.rows).toEqual([
      { key_hash: owner.keyHash, user_id: "user-a", team_id: null, deployment_id: "deployment-1" },
    ]);
    await Promise.all([writer.close(), reader.close()]);
  });

  it("the first record of an id stands (a stream names its id twice; a second owner never replaces the first)", async () => {
    const pool = await migratedPool();
    const clock = clockAt(Date.now());
    const one = new ResponseOwnerStore({ clock, pool });
    const two = new ResponseOwnerStore({ clock, pool, missWaitMs: 0 });
    one.record("resp_first_wins", owner, "deployment-1");
    await one.flush();
    two.record("resp_first_wins", { keyHash: "b".repeat(64), userId: null, teamId: null }, "deployment-2");
    await two.flush();
    const fresh = new ResponseOwnerStore({ clock, pool, missWaitMs: 0 });
    expect((await fresh.lookup("resp_first_wins"))?.owner).toEqual(owner);
    await Promise.all([one.close(), two.close(), fresh.close()]);
  });

  it("is kept for the upstream's 30-day retention, then ignored and swept", async () => {
    const pool = await migratedPool();
    const clock = clockAt(Date.now());
    const store = new ResponseOwnerStore({ clock, pool, missWaitMs: 0 });
    store.record("resp_expiring", owner, "deployment-1");
    await store.flush();
    clock.at += RESPONSE_RETENTION_MS - 1;
    expect(
      await new ResponseOwnerStore({ clock, pool, missWaitMs: 0 }).lookup("resp_expiring"),
    ).toBeDefined();
    clock.at += 1;
    expect(await store.lookup("resp_expiring")).toBeUndefined();
    expect(
      await new ResponseOwnerStore({ clock, pool, missWaitMs: 0 }).lookup("resp_expiring"),
    ).toBeUndefined();
    expect(await store.sweep()).toBeGreaterThanOrEqual(1);
    const left = await pool.query("SELECT 1 FROM response_owners WHERE response_id = 'resp_expiring'");
    expect(left.rowCount).toBe(0);
    await store.close();
  });

  it("with the database unreachable: a cached id answers, an uncached one is a 503 (ownership never assumed)", async () => {
    const db = await dbs.database();
    const clock = clockAt(Date.now());
    const down = createPool(db.urlVia(1), log, { connectionTimeoutMillis: 500 });
    const store = new ResponseOwnerStore({ clock, pool: down, missWaitMs: 0, retryMs: 50 });
    store.record("resp_cached_offline", owner, "deployment-1");
    expect((await store.lookup("resp_cached_offline"))?.deploymentId).toBe("deployment-1");
    await expect(store.lookup("resp_not_cached")).rejects.toMatchObject({
      status: 503,
      code: "response_owner_unavailable",
    });
    await store.close();
    await down.end();
  });
});
