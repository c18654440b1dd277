/**
 * Teams and team memberships as stored in `teams` and `team_memberships` (migration 8), and their wire form:
 * LiteLLM's `LiteLLM_TeamTable` and `LiteLLM_TeamMembership` (litellm/proxy/_types.py in BerriAI/litellm).
 * Times are epoch ms, money USD, limits per minute.
 */

import type { ObjectPermission } from "../auth/types.js";
import {
  epochOrNull,
  LIMIT_COLUMNS,
  type LimitFields,
  limitsFromRow,
  presentLimits,
  type Row,
  stringOrNull,
  toIso,
} from "../users/records.js";

/** A member's role in a team (LiteLLM's `Member.role`). */
export type TeamRole = "admin" | "user";

export interface TeamRecord extends LimitFields {
  teamId: string;
  teamAlias: string | null;
  /** Model aliases the team's keys may call (fallbacks included); empty = all. */
  models: string[];
  metadata: Record<string, unknown>;
  /**
   * LiteLLM's team `object_permission`, the MCP part: the MCP servers and tools the team's keys may reach
   * (`mcp/permissions.ts` combines it with the key's own); null: none granted.
   */
  objectPermission: ObjectPermission | null;
  /** A blocked team's keys are refused (401) until `/team/unblock`. */
  blocked: boolean;
  createdAt: number;
  updatedAt: number;
}

/**
 * A user's membership of a team. Its limit fields are the member's limits in the team: `maxBudget` is
 * LiteLLM's `max_budget_in_team` (USD, in the team's budget period), `spend` what the member's team keys spent.
 */
export interface MembershipRecord extends LimitFields {
  /** The membership's id: JSON `[team_id, user_id]` (see {@link memberKey}). */
  memberKey: string;
  teamId: string;
  userId: string;
  role: TeamRole;
  createdAt: number;
  updatedAt: number;
}

/** The one-column id of a membership: `["team-a","ann"]` (JSON, so no separator can be forged by an id). */
export const memberKey = (teamId: string, userId: string): string => JSON.stringify([teamId, userId]);

/** The `teams` columns, in the order {@link teamFromRow} reads them. */
export const TEAM_COLUMNS = [
  "team_id",
  "team_alias",
  "models",
  ...LIMIT_COLUMNS,
  "metadata",
  "blocked",
  "created_at",
  "updated_at",
  "object_permission",
] as const;

/** The `team_memberships` columns, in the order {@link membershipFromRow} reads them. */
export const MEMBERSHIP_COLUMNS = [
  "member_key",
  "team_id",
  "user_id",
  "role",
  ...LIMIT_COLUMNS,
  "created_at",
  "updated_at",
] as const;

/** Maps a `teams` row (columns optionally prefixed, e.g. `t_` in a join). */
export function teamFromRow(row: Row, prefix = ""): TeamRecord {
  const models = row[`${prefix}models`];
  return {
    ...limitsFromRow(row, prefix),
    teamId: String(row[`${prefix}team_id`]),
    teamAlias: stringOrNull(row[`${prefix}team_alias`]),
    models: Array.isArray(models) ? (models as string[]) : [],
    metadata: (row[`${prefix}metadata`] as Record<string, unknown> | null) ?? {},
    objectPermission: (row[`${prefix}object_permission`] as ObjectPermission | null | undefined) ?? null,
    blocked: row[`${prefix}blocked`] === true,
    createdAt: epochOrNull(row[`${prefix}created_at`]) ?? 0,
    updatedAt: epochOrNull(row[`${prefix}updated_at`]) ?? 0,
  };
}

/** Maps a `team_memberships` row (columns optionally prefixed, e.g. `m_` in a join). */
export function membershipFromRow(row: Row, prefix = ""): MembershipRecord {
  return {
    ...limitsFromRow(row, prefix),
    memberKey: String(row[`${prefix}member_key`]),
    teamId: String(row[`${prefix}team_id`]),
    userId: String(row[`${prefix}user_id`]),
    role: row[`${prefix}role`] === "admin" ? "admin" : "user",
    createdAt: epochOrNull(row[`${prefix}created_at`]) ?? 0,
    updatedAt: epochOrNull(row[`${prefix}updated_at`]) ?? 0,
  };
}

/** A member as LiteLLM lists it in `members_with_roles`. */
export interface MemberWithRole {
  role: TeamRole;
  user_id: string;
  user_email: string | null;
}

/** A team on the wire (LiteLLM's `LiteLLM_TeamTable` fields we keep), rolled over to `now`. */
export function presentTeam(team: TeamRecord, members: MemberWithRole[], now: number) {
  return {
    team_id: team.teamId,
    team_alias: team.teamAlias,
    models: team.models,
    ...presentLimits(team, now),
    metadata: team.metadata,
    object_permission: team.objectPermission,
    blocked: team.blocked,
    members_with_roles: members,
    // LiteLLM keeps the admins' and members' ids in `admins` / `members` beside `members_with_roles`.
    admins: members.filter((m) => m.role === "admin").map((m) => m.user_id),
    members: members.map((m) => m.user_id),
    created_at: toIso(team.createdAt),
    updated_at: toIso(team.updatedAt),
  };
}

/**
 * A membership on the wire (LiteLLM's `LiteLLM_TeamMembership`: `team_id`, `user_id`, `spend` and the member's
 * budget row `litellm_budget_table`), plus `role`, `user_email` and `max_budget_in_team` flattened for readers.
 */
export function presentMembership(member: MembershipRecord, userEmail: string | null, now: number) {
  const limits = presentLimits(member, now);
  const hasBudget = member.maxBudget !== null || member.tpmLimit !== null || member.rpmLimit !== null;
  return {
    team_id: member.teamId,
    user_id: member.userId,
    user_email: userEmail,
    role: member.role,
    spend: limits.spend,
    max_budget_in_team: member.maxBudget,
    litellm_budget_table: hasBudget
      ? {
          max_budget: limits.max_budget,
          budget_duration: limits.budget_duration,
          budget_reset_at: limits.budget_reset_at,
          tpm_limit: limits.tpm_limit,
          rpm_limit: limits.rpm_limit,
        }
      : null,
    created_at: toIso(member.createdAt),
    updated_at: toIso(member.updatedAt),
  };
}
