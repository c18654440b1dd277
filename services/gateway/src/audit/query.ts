/**
 * Reads and prunes the audit log: the filtered, paged listing behind `GET /audit/logs`, and the retention
 * job that deletes rows older than AUDIT_LOG_RETENTION_DAYS (the database refuses any other deletion).
 */
import type { AuditLogEntry } from "@platform/admin-api";
import type { FastifyBaseLogger } from "fastify";
import type pg from "pg";
import type { Queryable } from "../db/transaction.js";

/** Filters of {@link queryAuditLog}; times are epoch ms, `endTime` exclusive. */
export interface AuditFilter {
  actor?: string | undefined;
  action?: string | undefined;
  keyAlias?: string | undefined;
  /** A key's hash or a prefix of it (12+ hex characters); matched on the stored 12-character prefix. */
  keyHash?: string | undefined;
  userId?: string | undefined;
  teamId?: string | undefined;
  startTime?: number | undefined;
  endTime?: number | undefined;
}

const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : String(value));

/** One page of audit rows, newest first, and the total that match. */
export async function queryAuditLog(
  db: Queryable,
  filter: AuditFilter,
  page: number,
  pageSize: number,
): Promise<{ logs: AuditLogEntry[]; total: number }> {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    values.push(value);
    where.push(sql.replace("?", `$${values.length}`));
  };
  if (filter.actor !== undefined) add("actor = ?", filter.actor);
  if (filter.action !== undefined) add("action = ?", filter.action);
  if (filter.keyAlias !== undefined) add("key_alias = ?", filter.keyAlias);
  if (filter.keyHash !== undefined) add("key_hash_prefix = ?", filter.keyHash.slice(0, 12));
  if (filter.userId !== undefined) add("user_id = ?", filter.userId);
  if (filter.teamId !== undefined) add("team_id = ?", filter.teamId);
  if (filter.startTime !== undefined) add("created_at >= ?", new Date(filter.startTime));
  if (filter.endTime !== undefined) add("created_at < ?", new Date(filter.endTime));
  const clause = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
  const total = await db.query(`SELECT count(*)::int AS n FROM audit_log ${clause}`, values);
  const rows = await db.query(
    `SELECT * FROM audit_log ${clause} ORDER BY created_at DESC, id DESC LIMIT $${values.length + 1} OFFSET $${values.length + 2}`,
    [...values, pageSize, (page - 1) * pageSize],
  );
  return {
    total: total.rows[0]?.n ?? 0,
    logs: rows.rows.map((row) => ({
      id: String(row.id),
      created_at: iso(row.created_at),
      actor: row.actor,
      via: row.via,
      action: row.action,
      key_alias: row.key_alias,
      key_hash_prefix: row.key_hash_prefix,
      user_id: row.user_id,
      team_id: row.team_id,
      before: row.before,
      after: row.after,
      request_id: row.request_id,
      source_ip: row.source_ip,
    })),
  };
}

/**
 * Days a row is kept at least, whatever AUDIT_LOG_RETENTION_DAYS says: the database refuses to delete a row
 * it recorded less than this many days ago (migration 5: trigger `audit_log_no_delete` on `recorded_at`, the
 * database's own time of the insert).
 */
export const AUDIT_MIN_RETENTION_DAYS = 30;

/**
 * Deletes audit rows older than `retentionDays` before `now` (epoch ms, compared with `created_at`), skipping
 * any the database recorded less than {@link AUDIT_MIN_RETENTION_DAYS} ago (the trigger would refuse them and
 * fail the whole statement); returns how many went.
 */
export async function pruneAuditLog(db: Queryable, retentionDays: number, now: number): Promise<number> {
  const result = await db.query(
    `DELETE FROM audit_log
     WHERE created_at < $1 AND recorded_at < now() - make_interval(days => $2::int)`,
    [new Date(now - retentionDays * 86_400_000), AUDIT_MIN_RETENTION_DAYS],
  );
  return result.rowCount ?? 0;
}

/**
 * Runs {@link pruneAuditLog} now and every `everyMs` (default one hour); errors are logged, never thrown.
 * @returns a function that stops it.
 */
export function startAuditRetention(
  pool: pg.Pool,
  retentionDays: number,
  now: () => number,
  log: FastifyBaseLogger,
  everyMs = 3_600_000,
): () => void {
  const run = () =>
    pruneAuditLog(pool, retentionDays, now()).then(
      (pruned) => {
        if (pruned > 0) log.info({ pruned, retentionDays }, "audit log: rows past retention deleted");
      },
      (error: unknown) => log.warn({ err: (error as Error).message }, "audit log: retention run failed"),
    );
  void run();
  const timer = setInterval(run, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
