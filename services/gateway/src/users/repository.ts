/**
 * SQL for the `users` table. Times are epoch ms in and out; the caller's clock decides "now".
 */

import { type PatchTarget, updateRow } from "../db/patch.js";
import type { Queryable } from "../db/transaction.js";
import {
  LIMIT_COLUMNS,
  LIMIT_PATCH_COLUMNS,
  type LimitPatch,
  type NewLimits,
  newLimitValues,
  placeholders,
  USER_COLUMNS,
  type UserRecord,
  userFromRow,
} from "./records.js";

const SELECT_USER = `SELECT ${USER_COLUMNS.join(", ")} FROM users`;
const iso = (ms: number) => new Date(ms).toISOString();

/** Fields of a new user (limits already defaulted by the caller). */
export type NewUser = NewLimits & Pick<UserRecord, "userId" | "userEmail" | "userRole" | "metadata">;

/** The user, or null. `forUpdate` locks the row until the transaction ends. */
export async function findUser(db: Queryable, userId: string, forUpdate = false): Promise<UserRecord | null> {
  const result = await db.query(`${SELECT_USER} WHERE user_id = $1${forUpdate ? " FOR UPDATE" : ""}`, [
    userId,
  ]);
  const row = result.rows[0];
  return row === undefined ? null : userFromRow(row);
}

/** The oldest user with that email (compared case-insensitively), or null. */
export async function findUserByEmail(db: Queryable, email: string): Promise<UserRecord | null> {
  const result = await db.query(
    `${SELECT_USER} WHERE lower(user_email) = lower($1) ORDER BY created_at, user_id LIMIT 1`,
    [email],
  );
  const row = result.rows[0];
  return row === undefined ? null : userFromRow(row);
}

/**
 * A new `internal_user` with the gateway's default limits (DEFAULT_USER_BUDGET, DEFAULT_BUDGET_DURATION,
 * DEFAULT_TPM_LIMIT, DEFAULT_RPM_LIMIT), as provisioning makes one (the chat's users, team members by e-mail).
 */
export function defaultUser(
  userId: string,
  userEmail: string | null,
  defaults: Pick<NewUser, "maxBudget" | "budgetDuration" | "tpmLimit" | "rpmLimit">,
): NewUser {
  const { maxBudget, budgetDuration, tpmLimit, rpmLimit } = defaults;
  return {
    userId,
    userEmail,
    userRole: "internal_user",
    maxBudget,
    budgetDuration,
    tpmLimit,
    rpmLimit,
    metadata: {},
  };
}

/**
 * Creates the user unless one with that id exists (idempotent provisioning).
 * @returns the stored user, and whether this call created it. An existing user is returned unchanged.
 */
export async function insertUserIfAbsent(
  db: Queryable,
  user: NewUser,
  now: number,
): Promise<{ user: UserRecord; created: boolean }> {
  const inserted = await db.query(
    `INSERT INTO users (user_id, user_email, user_role, ${LIMIT_COLUMNS.join(", ")}, metadata, created_at,
       updated_at)
     VALUES (${placeholders(3 + LIMIT_COLUMNS.length + 2)}, $${3 + LIMIT_COLUMNS.length + 2})
     ON CONFLICT (user_id) DO NOTHING
     RETURNING ${USER_COLUMNS.join(", ")}`,
    [
      user.userId,
      user.userEmail,
      user.userRole,
      ...newLimitValues(user, now),
      JSON.stringify(user.metadata),
      iso(now),
    ],
  );
  const row = inserted.rows[0];
  if (row !== undefined) return { user: userFromRow(row), created: true };
  const existing = await findUser(db, user.userId);
  if (existing === null) throw new Error("user vanished between insert and select");
  return { user: existing, created: false };
}

/** Columns an update may set, by wire name (undefined = unchanged, null = cleared). */
export interface UserPatch extends LimitPatch {
  user_email?: string | null;
  user_role?: string;
  metadata?: Record<string, unknown>;
}

const USER_PATCH_COLUMNS = ["user_email", "user_role", ...LIMIT_PATCH_COLUMNS, "metadata"] as const;

/** Applies a patch; returns the updated user, or null when there is none with that id. */
export async function updateUser(
  db: Queryable,
  userId: string,
  patch: UserPatch,
  now: number,
): Promise<UserRecord | null> {
  return updateRow(db, USER_TARGET, userId, patch, now);
}

const USER_TARGET: PatchTarget<UserRecord> = {
  table: "users",
  idColumn: "user_id",
  allowed: USER_PATCH_COLUMNS,
  returning: USER_COLUMNS,
  fromRow: (row) => userFromRow(row),
};

/** Deletes users (their memberships go with them; their keys stay, without an owner); returns the deleted. */
export async function deleteUsers(db: Queryable, userIds: string[]): Promise<UserRecord[]> {
  const result = await db.query(
    `DELETE FROM users WHERE user_id = ANY($1::text[]) RETURNING ${USER_COLUMNS.join(", ")}`,
    [userIds],
  );
  return result.rows.map((row) => userFromRow(row));
}

/** One page of users, newest first, and the total count. */
export async function listUsers(
  db: Queryable,
  page: number,
  pageSize: number,
): Promise<{ users: UserRecord[]; total: number }> {
  const [rows, count] = await Promise.all([
    db.query(`${SELECT_USER} ORDER BY created_at DESC, user_id LIMIT $1 OFFSET $2`, [
      pageSize,
      (page - 1) * pageSize,
    ]),
    db.query<{ n: number }>("SELECT count(*) AS n FROM users"),
  ]);
  return { users: rows.rows.map((row) => userFromRow(row)), total: count.rows[0]?.n ?? 0 };
}
