/** Picks and opens the session backend from the console's settings: Redis, else Postgres, else memory. */
import { Redis } from "ioredis";
import pg from "pg";
import type { ConsoleConfig } from "../config.js";
import {
  MemorySessionBackend,
  PostgresSessionBackend,
  RedisSessionBackend,
  type SessionBackend,
} from "./session-backends.js";

/**
 * Opens the backend: REDIS_URL → Redis (keys `console:session:*`), else DATABASE_URL → Postgres (table
 * `console_sessions`, created when missing), else memory.
 * @throws the database's error when Postgres cannot be reached or the table cannot be created.
 */
export async function openSessionBackend(
  config: Pick<ConsoleConfig, "redisUrl" | "databaseUrl">,
): Promise<SessionBackend> {
  if (config.redisUrl !== undefined) {
    return new RedisSessionBackend(
      new Redis(config.redisUrl, { maxRetriesPerRequest: 1, commandTimeout: 2000 }),
    );
  }
  if (config.databaseUrl !== undefined) {
    const backend = new PostgresSessionBackend(new pg.Pool({ connectionString: config.databaseUrl, max: 4 }));
    await backend.init();
    return backend;
  }
  return new MemorySessionBackend();
}
