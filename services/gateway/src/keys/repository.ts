/**
 * SQL for the `keys` table. Times are epoch ms in and out; the caller's clock decides "now".
 */
import type { ObjectPermission } from "../auth/types.js";
import { type PatchTarget, updateRow } from "../db/patch.js";
import type { Queryable } from "../db/transaction.js";
import {
  LIMIT_COLUMNS,
  LIMIT_PATCH_COLUMNS,
  type LimitPatch,
  type NewLimits,
  newLimitValues,
  placeholders,
} from "../users/records.js";
import { KEY_COLUMNS, type KeyRecord, keyFromRow } from "./records.js";

const SELECT_KEY = `SELECT ${KEY_COLUMNS.join(", ")} FROM keys`;
/**
 * The key columns plus `last_used_at`: the start of the key's newest booked request. Nothing is written on the
 * request path for it: the spend rows (written in batches after each call) already hold it, and
 * `spend_logs_api_key_time_idx` answers it with one index probe per listed key.
 */
const SELECT_KEY_WITH_LAST_USE = `SELECT ${KEY_COLUMNS.join(", ")}, (SELECT s.start_time FROM spend_logs s WHERE s.api_key = keys.token ORDER BY s.start_time DESC LIMIT 1) AS last_used_at FROM keys`;
const RETURNING_KEY = `RETURNING ${KEY_COLUMNS.join(", ")}`;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Fields of a new key (the hash and display name of a freshly generated key, limits validated). */
export type NewKey = NewLimits &
  Pick<KeyRecord, "token" | "keyName" | "keyAlias" | "userId" | "teamId" | "models" | "metadata"> &
  Pick<KeyRecord, "expires" | "objectPermission">;

export async function insertKey(db: Queryable, key: NewKey, now: number): Promise<KeyRecord> {
  const result = await db.query(
    `INSERT INTO keys (token, key_name, key_alias, user_id, team_id, models, ${LIMIT_COLUMNS.join(", ")}, metadata,
       expires, created_at, updated_at, object_permission)
     VALUES (${placeholders(6 + LIMIT_COLUMNS.length + 3)}, $${6 + LIMIT_COLUMNS.length + 3}, $${6 + LIMIT_COLUMNS.length + 4})
     ${RETURNING_KEY}`,
    [
      key.token,
      key.keyName,
      key.keyAlias,
      key.userId,
      key.teamId,
      key.models,
      ...newLimitValues(key, now),
      JSON.stringify(key.metadata),
      iso(key.expires),
      iso(now),
      key.objectPermission == null ? null : JSON.stringify(key.objectPermission),
    ],
  );
  return keyFromRow(result.rows[0] as Record<string, unknown>);
}

/** The key with that hash, or null. `forUpdate` locks the row until the transaction ends. */
export async function findKey(db: Queryable, token: string, forUpdate = false): Promise<KeyRecord | null> {
  const result = await db.query(`${SELECT_KEY} WHERE token = $1${forUpdate ? " FOR UPDATE" : ""}`, [token]);
  const row = result.rows[0];
  return row === undefined ? null : keyFromRow(row);
}

/**
 * Serialises alias checks for one (user, alias) pair until the transaction ends, so two concurrent generates
 * cannot both take the same alias. Must run inside a transaction.
 */
export async function lockAlias(db: Queryable, alias: string, userId: string | null): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
    JSON.stringify(["key_alias", userId, alias]),
  ]);
}

/**
 * The hash of the active key (not revoked, not expired at `now`) of this user holding the alias, or null.
 * Aliases are unique among a user's active keys: a revoked or expired key's alias can be used again.
 */
export async function activeAliasHolder(
  db: Queryable,
  alias: string,
  userId: string | null,
  now: number,
  exceptToken?: string,
): Promise<string | null> {
  const result = await db.query<{ token: string }>(
    `SELECT token FROM keys
     WHERE key_alias = $1 AND user_id IS NOT DISTINCT FROM $2 AND revoked_at IS NULL
       AND (expires IS NULL OR expires > $3) AND token <> $4
     LIMIT 1`,
    [alias, userId, iso(now), exceptToken ?? ""],
  );
  return result.rows[0]?.token ?? null;
}

/** Columns a key update may set, by wire name (undefined = unchanged, null = cleared). */
export interface KeyPatch extends LimitPatch {
  key_alias?: string | null;
  models?: string[];
  metadata?: Record<string, unknown>;
  /** LiteLLM's `object_permission` (null clears it). */
  object_permission?: ObjectPermission | null;
  /** ISO time. */
  expires?: string | null;
  blocked?: boolean;
}

const KEY_PATCH_COLUMNS = [
  "key_alias",
  "models",
  ...LIMIT_PATCH_COLUMNS,
  "metadata",
  "object_permission",
  "expires",
  "blocked",
] as const;

/** Applies a patch; returns the updated key, or null when there is none with that hash. */
export async function updateKey(
  db: Queryable,
  token: string,
  patch: KeyPatch,
  now: number,
): Promise<KeyRecord | null> {
  return updateRow(db, KEY_TARGET, token, patch, now);
}

const KEY_TARGET: PatchTarget<KeyRecord> = {
  table: "keys",
  idColumn: "token",
  allowed: KEY_PATCH_COLUMNS,
  returning: KEY_COLUMNS,
  fromRow: keyFromRow,
};

/**
 * Gives the key with hash `token` a new secret: its hash becomes `newToken` and its display name `newName`;
 * limits, spend, alias, owner and team stay. Returns the key as stored after the change, or null when there is
 * none with that hash. Spend rows written before keep the old hash.
 */
export async function rekey(
  db: Queryable,
  token: string,
  newToken: string,
  newName: string,
  now: number,
): Promise<KeyRecord | null> {
  const result = await db.query(
    `UPDATE keys SET token = $2, key_name = $3, updated_at = $4 WHERE token = $1 ${RETURNING_KEY}`,
    [token, newToken, newName, iso(now)],
  );
  const row = result.rows[0];
  return row === undefined ? null : keyFromRow(row);
}

/**
 * Revokes keys (sets `revoked_at`, keeps the row for history). Already revoked keys keep their first
 * revocation time.
 * @returns the keys that exist (revoked now or before), as stored after the change.
 */
export async function revokeKeys(db: Queryable, tokens: string[], now: number): Promise<KeyRecord[]> {
  const result = await db.query(
    `UPDATE keys SET revoked_at = COALESCE(revoked_at, $2), updated_at = $2
     WHERE token = ANY($1::text[]) ${RETURNING_KEY}`,
    [tokens, iso(now)],
  );
  return result.rows.map(keyFromRow);
}

/** The hashes of keys holding any of these aliases (any user), not yet revoked. */
export async function tokensByAlias(db: Queryable, aliases: string[]): Promise<string[]> {
  const result = await db.query<{ token: string }>(
    "SELECT token FROM keys WHERE key_alias = ANY($1::text[]) AND revoked_at IS NULL",
    [aliases],
  );
  return result.rows.map((r) => r.token);
}

/** Filters of {@link listKeys}. */
export interface KeyFilter {
  userId?: string | undefined;
  teamId?: string | undefined;
  keyAlias?: string | undefined;
  keyHash?: string | undefined;
  /** Include revoked keys (default: only active and expired). */
  includeRevoked?: boolean | undefined;
}

/** One page of keys, newest first (each with `lastUsedAt`), and the total count. */
export async function listKeys(
  db: Queryable,
  filter: KeyFilter,
  page: number,
  pageSize: number,
): Promise<{ keys: KeyRecord[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (condition: string, value: unknown) => {
    params.push(value);
    where.push(condition.replace("?", `$${params.length}`));
  };
  if (filter.userId !== undefined) add("user_id = ?", filter.userId);
  if (filter.teamId !== undefined) add("team_id = ?", filter.teamId);
  if (filter.keyAlias !== undefined) add("key_alias = ?", filter.keyAlias);
  if (filter.keyHash !== undefined) add("token = ?", filter.keyHash);
  if (filter.includeRevoked !== true) where.push("revoked_at IS NULL");
  const clause = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
  const n = params.length;
  const [rows, count] = await Promise.all([
    db.query(
      `${SELECT_KEY_WITH_LAST_USE} ${clause} ORDER BY created_at DESC, token LIMIT $${n + 1} OFFSET $${n + 2}`,
      [...params, pageSize, (page - 1) * pageSize],
    ),
    db.query<{ n: number }>(`SELECT count(*) AS n FROM keys ${clause}`, params),
  ]);
  return { keys: rows.rows.map(keyFromRow), total: count.rows[0]?.n ?? 0 };
}
