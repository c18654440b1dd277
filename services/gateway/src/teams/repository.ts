/**
 * SQL for the `teams` and `team_memberships` tables. Times are epoch ms in and out; the caller's clock decides
 * "now".
 */
import type { ObjectPermission } from "../auth/types.js";
import { type PatchTarget, patchAssignments, updateRow } from "../db/patch.js";
import type { Queryable } from "../db/transaction.js";
import {
  LIMIT_COLUMNS,
  LIMIT_PATCH_COLUMNS,
  type LimitPatch,
  type NewLimits,
  newLimitValues,
  placeholders,
} from "../users/records.js";
import {
  MEMBERSHIP_COLUMNS,
  type MembershipRecord,
  type MemberWithRole,
  memberKey,
  membershipFromRow,
  TEAM_COLUMNS,
  type TeamRecord,
  type TeamRole,
  teamFromRow,
} from "./records.js";

const SELECT_TEAM = `SELECT ${TEAM_COLUMNS.join(", ")} FROM teams`;
const RETURNING_TEAM = `RETURNING ${TEAM_COLUMNS.join(", ")}`;
const RETURNING_MEMBER = `RETURNING ${MEMBERSHIP_COLUMNS.join(", ")}`;
const iso = (ms: number) => new Date(ms).toISOString();

/** Fields of a new team (limits validated by the caller). */
export type NewTeam = NewLimits &
  Pick<TeamRecord, "teamId" | "teamAlias" | "models" | "metadata" | "blocked"> &
  Partial<Pick<TeamRecord, "objectPermission">>;

/** Inserts a team; null when a team with that id exists already. */
export async function insertTeam(db: Queryable, team: NewTeam, now: number): Promise<TeamRecord | null> {
  const result = await db.query(
    `INSERT INTO teams (team_id, team_alias, models, ${LIMIT_COLUMNS.join(", ")}, metadata, blocked, created_at,
       updated_at, object_permission)
     VALUES (${placeholders(3 + LIMIT_COLUMNS.length + 3)}, $${3 + LIMIT_COLUMNS.length + 3},
       $${3 + LIMIT_COLUMNS.length + 4})
     ON CONFLICT (team_id) DO NOTHING ${RETURNING_TEAM}`,
    [
      team.teamId,
      team.teamAlias,
      team.models,
      ...newLimitValues(team, now),
      JSON.stringify(team.metadata),
      team.blocked,
      iso(now),
      team.objectPermission == null ? null : JSON.stringify(team.objectPermission),
    ],
  );
  const row = result.rows[0];
  return row === undefined ? null : teamFromRow(row);
}

/**
 * The team, or null. `lock`: `update` locks the row until the transaction ends (changes, deletion), `share`
 * keeps it from being deleted meanwhile (a key or membership being made for it).
 */
export async function findTeam(
  db: Queryable,
  teamId: string,
  lock?: "update" | "share",
): Promise<TeamRecord | null> {
  const suffix = lock === undefined ? "" : lock === "update" ? " FOR UPDATE" : " FOR SHARE";
  const result = await db.query(`${SELECT_TEAM} WHERE team_id = $1${suffix}`, [teamId]);
  const row = result.rows[0];
  return row === undefined ? null : teamFromRow(row);
}

/** Columns a team update may set, by wire name (undefined = unchanged, null = cleared). */
export interface TeamPatch extends LimitPatch {
  team_alias?: string | null;
  models?: string[];
  metadata?: Record<string, unknown>;
  /** LiteLLM's `object_permission` (null clears it). */
  object_permission?: ObjectPermission | null;
  blocked?: boolean;
}

const TEAM_PATCH_COLUMNS = [
  "team_alias",
  "models",
  ...LIMIT_PATCH_COLUMNS,
  "metadata",
  "object_permission",
  "blocked",
] as const;

/**
 * Applies a patch; returns the updated team, or null when there is none with that id. A new `budget_duration`
 * also becomes the period of every member budget in the team (a member's budget runs in the team's period).
 */
export async function updateTeam(
  db: Queryable,
  teamId: string,
  patch: TeamPatch,
  now: number,
): Promise<TeamRecord | null> {
  const team = await updateRow(db, TEAM_TARGET, teamId, patch, now);
  if (team === null) return null;
  if (patch.budget_duration !== undefined) {
    const periods = patchAssignments({ budget_duration: patch.budget_duration }, ["budget_duration"], now, 2);
    await db.query(`UPDATE team_memberships SET ${periods.sql} WHERE team_id = $1`, [
      teamId,
      ...periods.params,
    ]);
  }
  return team;
}

const TEAM_TARGET: PatchTarget<TeamRecord> = {
  table: "teams",
  idColumn: "team_id",
  allowed: TEAM_PATCH_COLUMNS,
  returning: TEAM_COLUMNS,
  fromRow: (row) => teamFromRow(row),
};

/** Deletes teams (their memberships go with them); returns the deleted teams. */
export async function deleteTeams(db: Queryable, teamIds: string[]): Promise<TeamRecord[]> {
  const result = await db.query(`DELETE FROM teams WHERE team_id = ANY($1::text[]) ${RETURNING_TEAM}`, [
    teamIds,
  ]);
  return result.rows.map((row) => teamFromRow(row));
}

/** One page of teams, newest first, and the total count. */
export async function listTeams(
  db: Queryable,
  page: number,
  pageSize: number,
  userId?: string,
): Promise<{ teams: TeamRecord[]; total: number }> {
  const where =
    userId === undefined ? "" : "WHERE team_id IN (SELECT team_id FROM team_memberships WHERE user_id = $3)";
  const params = userId === undefined ? [] : [userId];
  const [rows, count] = await Promise.all([
    db.query(`${SELECT_TEAM} ${where} ORDER BY created_at DESC, team_id LIMIT $1 OFFSET $2`, [
      pageSize,
      (page - 1) * pageSize,
      ...params,
    ]),
    db.query<{ n: number }>(`SELECT count(*) AS n FROM teams ${where.replace("$3", "$1")}`, params),
  ]);
  return { teams: rows.rows.map((row) => teamFromRow(row)), total: count.rows[0]?.n ?? 0 };
}

/** A membership with its user's email. */
export interface MemberView {
  member: MembershipRecord;
  userEmail: string | null;
}

/** The memberships of these teams (with each user's email), oldest first. */
export function listMembers(db: Queryable, teamIds: string[]): Promise<MemberView[]> {
  return membershipsWhere(db, "team_id", teamIds);
}

/** The team memberships of these users (with each user's email), oldest first. */
export function listMembershipsOfUsers(db: Queryable, userIds: string[]): Promise<MemberView[]> {
  return membershipsWhere(db, "user_id", userIds);
}

async function membershipsWhere(
  db: Queryable,
  column: "team_id" | "user_id",
  ids: string[],
): Promise<MemberView[]> {
  if (ids.length === 0) return [];
  const result = await db.query(
    `SELECT ${MEMBERSHIP_COLUMNS.map((c) => `m.${c}`).join(", ")}, u.user_email AS user_email
     FROM team_memberships m JOIN users u ON u.user_id = m.user_id
     WHERE m.${column} = ANY($1::text[]) ORDER BY m.created_at, m.user_id`,
    [ids],
  );
  return result.rows.map((row) => ({
    member: membershipFromRow(row),
    userEmail: typeof row.user_email === "string" ? row.user_email : null,
  }));
}

/** The members of one team as LiteLLM's `members_with_roles`. */
export function membersWithRoles(views: MemberView[], teamId: string): MemberWithRole[] {
  return views
    .filter((v) => v.member.teamId === teamId)
    .map((v) => ({ role: v.member.role, user_id: v.member.userId, user_email: v.userEmail }));
}

/** The membership, or null. `forUpdate` locks the row until the transaction ends. */
export async function findMembership(
  db: Queryable,
  teamId: string,
  userId: string,
  forUpdate = false,
): Promise<MembershipRecord | null> {
  const result = await db.query(
    `SELECT ${MEMBERSHIP_COLUMNS.join(", ")} FROM team_memberships WHERE member_key = $1${forUpdate ? " FOR UPDATE" : ""}`,
    [memberKey(teamId, userId)],
  );
  const row = result.rows[0];
  return row === undefined ? null : membershipFromRow(row);
}

/** Fields of a new membership; its budget runs in the team's period (`budgetDuration` = the team's). */
export interface NewMembership extends NewLimits {
  teamId: string;
  userId: string;
  role: TeamRole;
}

/** Inserts a membership; null when the user is a member of the team already. */
export async function insertMembership(
  db: Queryable,
  member: NewMembership,
  now: number,
): Promise<MembershipRecord | null> {
  const result = await db.query(
    `INSERT INTO team_memberships (member_key, team_id, user_id, role, ${LIMIT_COLUMNS.join(", ")}, created_at,
       updated_at)
     VALUES (${placeholders(4 + LIMIT_COLUMNS.length + 1)}, $${4 + LIMIT_COLUMNS.length + 1})
     ON CONFLICT (member_key) DO NOTHING ${RETURNING_MEMBER}`,
    [
      memberKey(member.teamId, member.userId),
      member.teamId,
      member.userId,
      member.role,
      ...newLimitValues(member, now),
      iso(now),
    ],
  );
  const row = result.rows[0];
  return row === undefined ? null : membershipFromRow(row);
}

/** Columns a membership update may set (undefined = unchanged, null = cleared). */
export interface MembershipPatch {
  role?: TeamRole;
  max_budget?: number | null;
  tpm_limit?: number | null;
  rpm_limit?: number | null;
}

/** Applies a patch; returns the updated membership, or null when there is none. */
export async function updateMembership(
  db: Queryable,
  teamId: string,
  userId: string,
  patch: MembershipPatch,
  now: number,
): Promise<MembershipRecord | null> {
  return updateRow(db, MEMBERSHIP_TARGET, memberKey(teamId, userId), patch, now);
}

const MEMBERSHIP_TARGET: PatchTarget<MembershipRecord> = {
  table: "team_memberships",
  idColumn: "member_key",
  allowed: ["role", "max_budget", "tpm_limit", "rpm_limit"],
  returning: MEMBERSHIP_COLUMNS,
  fromRow: (row) => membershipFromRow(row),
};

/** Deletes a membership; returns it, or null when there was none. */
export async function deleteMembership(
  db: Queryable,
  teamId: string,
  userId: string,
): Promise<MembershipRecord | null> {
  const result = await db.query(`DELETE FROM team_memberships WHERE member_key = $1 ${RETURNING_MEMBER}`, [
    memberKey(teamId, userId),
  ]);
  const row = result.rows[0];
  return row === undefined ? null : membershipFromRow(row);
}
