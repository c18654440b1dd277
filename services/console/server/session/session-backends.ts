/**
 * Where console sessions live: a string per session key with an idle expiry. Redis (`SET key value PX ttl`),
 * Postgres (table `console_sessions`, created if missing; expired rows swept on writes), or process memory.
 */
import type { Redis } from "ioredis";
import type pg from "pg";

/** A key-value store with expiry for sessions. */
export interface SessionBackend {
  readonly kind: "redis" | "postgres" | "memory";
  /** The stored value, or null when absent or expired. */
  get(key: string): Promise<string | null>;
  /** Stores `value` for `ttlMs` from `now` (epoch ms). */
  set(key: string, value: string, ttlMs: number, now: number): Promise<void>;
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

/** In process: lost at restart, not shared by replicas. */
export class MemorySessionBackend implements SessionBackend {
  readonly kind = "memory";
  private readonly entries = new Map<string, { value: string; expiresAt: number }>();

  async get(key: string): Promise<string | null> {
    const entry = this.entries.get(key);
    if (entry === undefined) return null;
    if (Date.now() >= entry.expiresAt) {
      this.entries.delete(key);
      return null;
    }
    return entry.value;
  }
  async set(key: string, value: string, ttlMs: number): Promise<void> {
    for (const [k, e] of this.entries) if (Date.now() >= e.expiresAt) this.entries.delete(k);
    this.entries.set(key, { value, expiresAt: Date.now() + ttlMs });
  }
  async delete(key: string): Promise<void> {
    this.entries.delete(key);
  }
  async close(): Promise<void> {}
}

/** Redis: keys `<prefix>session:<key>`, expiring by themselves. */
export class RedisSessionBackend implements SessionBackend {
  readonly kind = "redis";
  constructor(
    private readonly client: Redis,
    private readonly prefix = "console:",
  ) {}
  get(key: string): Promise<string | null> {
    return this.client.get(`${this.prefix}session:${key}`);
  }
  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.client.set(`${this.prefix}session:${key}`, value, "PX", Math.max(1, Math.round(ttlMs)));
  }
  async delete(key: string): Promise<void> {
    await this.client.del(`${this.prefix}session:${key}`);
  }
  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}

/** Postgres: one row per session in `console_sessions`. Call {@link PostgresSessionBackend.init} once. */
export class PostgresSessionBackend implements SessionBackend {
  readonly kind = "postgres";
  private writes = 0;
  constructor(private readonly pool: pg.Pool) {}

  /** Creates the table when missing (safe with several replicas starting at once). */
  async init(): Promise<void> {
    await this.pool.query(
      `CREATE TABLE IF NOT EXISTS console_sessions (
         key text PRIMARY KEY, value text NOT NULL, expires_at timestamptz NOT NULL)`,
    );
  }
  async get(key: string): Promise<string | null> {
    const result = await this.pool.query(
      "SELECT value FROM console_sessions WHERE key = $1 AND expires_at > now()",
      [key],
    );
    return (result.rows[0]?.value as string | undefined) ?? null;
  }
  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO console_sessions (key, value, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`,
      [key, value, Math.round(ttlMs)],
    );
    this.writes += 1;
    if (this.writes % 100 === 1)
      await this.pool.query("DELETE FROM console_sessions WHERE expires_at <= now()");
  }
  async delete(key: string): Promise<void> {
    await this.pool.query("DELETE FROM console_sessions WHERE key = $1", [key]);
  }
  async close(): Promise<void> {
    await this.pool.end();
  }
}
