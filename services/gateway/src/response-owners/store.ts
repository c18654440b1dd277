/**
 * The {@link ResponseOwners} registry: an in-process cache in front of the `response_owners` table (migration 6),
 * shared by every gateway instance. Without a database it is the cache alone (one process; only the master key
 * works then anyway).
 *
 * Ordering: a record is in this instance's cache before the answer that carries its id is sent, so a follow-up
 * on the same instance always finds it. The table write is batched off the hot path (queued, flushed within
 * `flushDelayMs`, retried every `retryMs` while Postgres fails); a follow-up that reaches another instance before
 * the write landed misses the table once, waits `missWaitMs` and reads again, so only an id nobody owns costs
 * that wait. Expired rows are ignored on read and deleted by a sweep every `sweepEveryMs`.
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyBaseLogger } from "fastify";
import type pg from "pg";
import { setBounded, sharedQuery } from "../cache/freshness.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Clock } from "../time/clock.js";
import {
  MAX_RESPONSE_ID_CHARS,
  RESPONSE_RETENTION_MS,
  type ResponseOwner,
  type ResponseOwners,
  type ResponseRecord,
} from "./types.js";

/** Settings of {@link ResponseOwnerStore} (tests shorten the times). */
export interface ResponseOwnerStoreOptions {
  clock: Clock;
  /** The shared table's database; absent: this process's cache only. */
  pool?: pg.Pool;
  log?: FastifyBaseLogger;
  /** Records kept in the cache (oldest dropped first); default 100,000. */
  maxCached?: number;
  /** Wait before a batch is written, ms; default 10. */
  flushDelayMs?: number;
  /** Wait before a failed batch is written again, ms; default 1,000. */
  retryMs?: number;
  /** Records waiting for the table at most (oldest dropped, with a warning); default 100,000. */
  maxQueued?: number;
  /** Wait before an id missing from the table is read again, ms (a write in flight elsewhere); default 200. */
  missWaitMs?: number;
  /** Interval of the sweep deleting expired rows, ms; default one hour (0: no sweep). */
  sweepEveryMs?: number;
}

interface Row {
  id: string;
  record: ResponseRecord;
}

const INSERT_SQL = `INSERT INTO response_owners (response_id, key_hash, user_id, team_id, deployment_id, expires_at)
SELECT i, k, u, t, d, to_timestamp(e / 1000.0)
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::float8[]) AS r(i, k, u, t, d, e)
ON CONFLICT (response_id) DO NOTHING`;

const SELECT_SQL = `SELECT key_hash, user_id, team_id, deployment_id, extract(epoch FROM expires_at) * 1000 AS expires_ms
FROM response_owners WHERE response_id = $1 AND expires_at > to_timestamp($2 / 1000.0)`;

const SWEEP_SQL = "DELETE FROM response_owners WHERE expires_at <= to_timestamp($1 / 1000.0)";

/** 503 when ownership cannot be checked (the table is unreachable and the id is not cached). */
const unverifiable = () =>
  new GatewayError(
    503,
    "The gateway cannot check who owns this response right now (its database is unreachable). Retry in a few seconds.",
    { type: "service_unavailable", code: "response_owner_unavailable" },
  );

/** See the module comment. */
export class ResponseOwnerStore implements ResponseOwners {
  private readonly cache = new Map<string, ResponseRecord>();
  /** Lookups of an id not cached, in flight: concurrent ones share one (`sharedQuery`). */
  private readonly lookups = new Map<string, Promise<ResponseRecord | undefined>>();
  /** Records dropped from a full queue since the last warning (one warning per outage, not per record). */
  private droppedSinceLog = 0;
  private queue: Row[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly sweeper: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly settings: Required<Omit<ResponseOwnerStoreOptions, "pool" | "log" | "clock">>;

  constructor(private readonly options: ResponseOwnerStoreOptions) {
    this.settings = {
      maxCached: options.maxCached ?? 100_000,
      flushDelayMs: options.flushDelayMs ?? 10,
      retryMs: options.retryMs ?? 1000,
      maxQueued: options.maxQueued ?? 100_000,
      missWaitMs: options.missWaitMs ?? 200,
      sweepEveryMs: options.sweepEveryMs ?? 60 * 60_000,
    };
    if (options.pool !== undefined && this.settings.sweepEveryMs > 0) {
      this.sweeper = setInterval(() => void this.sweep(), this.settings.sweepEveryMs);
      this.sweeper.unref();
    }
  }

  record(responseId: string, owner: ResponseOwner, deploymentId: string): void {
    if (responseId === "" || responseId.length > MAX_RESPONSE_ID_CHARS) return;
    const record = { owner, deploymentId, expiresAt: this.options.clock.now() + RESPONSE_RETENTION_MS };
    // A stream names its id twice (`response.created`, `response.completed`): the first record stands.
    if (this.cache.has(responseId)) return;
    this.remember(responseId, record);
    if (this.options.pool === undefined || this.closed) return;
    if (this.queue.length >= this.settings.maxQueued) {
      this.queue.shift();
      if (this.droppedSinceLog++ === 0)
        this.options.log?.warn(
          "response owner queue full: the oldest records are dropped before they are written (their owners get 404 on other instances)",
        );
    }
    this.queue.push({ id: responseId, record });
    this.schedule(this.settings.flushDelayMs);
  }

  async lookup(responseId: string): Promise<ResponseRecord | undefined> {
    if (responseId === "" || responseId.length > MAX_RESPONSE_ID_CHARS) return undefined;
    const now = this.options.clock.now();
    const cached = this.cache.get(responseId);
    if (cached !== undefined) {
      if (cached.expiresAt > now) return cached;
      this.cache.delete(responseId);
    }
    if (this.options.pool === undefined) return undefined;
    return sharedQuery(this.lookups, responseId, async () => {
      const found =
        (await this.read(responseId, now)) ??
        (this.settings.missWaitMs > 0
          ? await sleep(this.settings.missWaitMs).then(() => this.read(responseId, this.options.clock.now()))
          : undefined);
      if (found !== undefined) this.remember(responseId, found);
      return found;
    });
  }

  /** Writes every queued record now: one try (a failed batch goes back to the queue and is retried later). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.flushing !== undefined) await this.flushing;
    if (this.queue.length === 0) return;
    this.flushing = this.write().finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    await this.flush().catch(() => undefined);
    clearTimeout(this.timer);
  }

  /** Deletes expired rows (also run every `sweepEveryMs`); returns how many. */
  async sweep(): Promise<number> {
    const pool = this.options.pool;
    if (pool === undefined) return 0;
    try {
      const result = await pool.query(SWEEP_SQL, [this.options.clock.now()]);
      return result.rowCount ?? 0;
    } catch (error) {
      this.options.log?.warn({ err: error }, "response owner sweep failed; the next one retries");
      return 0;
    }
  }

  private remember(responseId: string, record: ResponseRecord): void {
    setBounded(this.cache, responseId, record, this.settings.maxCached);
  }

  private schedule(delayMs: number): void {
    if (this.timer !== undefined || this.flushing !== undefined) return;
    this.timer = setTimeout(() => void this.flush(), delayMs);
  }

  /** One batch: the whole queue in one statement; on failure it goes back to the queue's front. */
  private async write(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    try {
      await this.options.pool!.query(INSERT_SQL, [
        batch.map((r) => r.id),
        batch.map((r) => r.record.owner.keyHash),
        batch.map((r) => r.record.owner.userId),
        batch.map((r) => r.record.owner.teamId),
        batch.map((r) => r.record.deploymentId),
        batch.map((r) => r.record.expiresAt),
      ]);
    } catch (error) {
      this.queue = [...batch, ...this.queue].slice(-this.settings.maxQueued);
      this.options.log?.warn(
        { err: error, queued: this.queue.length },
        "response owners not written; retrying",
      );
      if (this.closed) throw error;
      setTimeout(() => this.schedule(0), this.settings.retryMs).unref();
      return;
    }
    if (this.droppedSinceLog > 0) {
      this.options.log?.warn(
        { dropped: this.droppedSinceLog },
        "response owners written again after an outage",
      );
      this.droppedSinceLog = 0;
    }
    if (this.queue.length > 0) setImmediate(() => this.schedule(this.settings.flushDelayMs));
  }

  private async read(responseId: string, now: number): Promise<ResponseRecord | undefined> {
    let rows: Array<{
      key_hash: string | null;
      user_id: string | null;
      team_id: string | null;
      deployment_id: string;
      expires_ms: string | number;
    }>;
    try {
      rows = (await this.options.pool!.query(SELECT_SQL, [responseId, now])).rows;
    } catch (error) {
      this.options.log?.warn({ err: error }, "response owner lookup failed");
      throw unverifiable();
    }
    const row = rows[0];
    if (row === undefined) return undefined;
    return {
      owner: { keyHash: row.key_hash, userId: row.user_id, teamId: row.team_id },
      deploymentId: row.deployment_id,
      expiresAt: Number(row.expires_ms),
    };
  }
}
