/**
 * ensureServiceKey (keys/service-key.ts) on a real Postgres: what it creates, that it is idempotent, and the
 * warning it gives for a service key an operator revoked or stripped of `user_headers` (never the key itself).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../../../services/gateway/src/db/migrate.js";
import { createPool } from "../../../../services/gateway/src/db/pool.js";
import { ensureServiceKey } from "../../../../services/gateway/src/keys/service-key.js";
import { createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";
import { recordingLogger } from "../store/harness.js";

const KEY = "sk-servicekeytest0123456789abcdefghijklmnopqrstuv";
const NOW = Date.UTC(2026, 5, 1);
let db: TestDatabase;
let pool: ReturnType<typeof createPool>;
const log = recordingLogger();

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, log);
  await migrate(pool, log);
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe("ensureServiceKey", () => {
  it("creates the key once, then finds it; a revoked or stripped key is reported, never changed or logged", async () => {
    expect(await ensureServiceKey(pool, KEY, NOW, log)).toBe("created");
    expect(await ensureServiceKey(pool, KEY, NOW + 1000, log)).toBe("exists");
    const rows = await pool.query("SELECT key_name, key_alias, metadata, expires, created_at FROM keys");
    expect(rows.rows).toEqual([
      {
        key_name: "sk-…stuv",
        key_alias: "chat-service",
        metadata: { service: "chat", user_headers: true },
        expires: null,
        created_at: new Date(NOW),
      },
    ]);

    await pool.query("UPDATE keys SET metadata = '{}'::jsonb");
    expect(await ensureServiceKey(pool, KEY, NOW + 2000, log)).toBe("cannot-name-users");
    await pool.query("UPDATE keys SET revoked_at = $1", [new Date(NOW + 3000)]);
    expect(await ensureServiceKey(pool, KEY, NOW + 4000, log)).toBe("revoked");
    expect((await pool.query("SELECT revoked_at, metadata FROM keys")).rows[0]).toEqual({
      revoked_at: new Date(NOW + 3000),
      metadata: {},
    });
    expect(log.lines.filter((l) => l.includes("set a new CHAT_SERVICE_KEY"))).toHaveLength(2);
    expect(log.lines.join("\n")).not.toContain(KEY);
  });

  it("refuses a value that is not a virtual key", async () => {
    await expect(ensureServiceKey(pool, "not-a-key", NOW, log)).rejects.toThrow(
      /CHAT_SERVICE_KEY must start with sk-/,
    );
  });
});
