/**
 * Schemas of the gateway's team API (master key only), LiteLLM's shapes (litellm/proxy/_types.py
 * `NewTeamRequest`, `UpdateTeamRequest`, `DeleteTeamRequest`, `BlockTeamRequest`, `TeamMemberAddRequest`,
 * `TeamMemberUpdateRequest`, `TeamMemberDeleteRequest`, `LiteLLM_TeamTable`, `LiteLLM_TeamMembership`;
 * docs.litellm.ai/docs/proxy/team_budgets and /docs/proxy/users). Money USD, limits per minute, times ISO 8601.
 */
import { z } from "zod";
import {
  identifier,
  isoTime,
  limitFields,
  metadata,
  modelList,
  money,
  objectPermission,
  pageNumber,
  pageSize,
  perMinute,
} from "./fields.js";
import { adminRequest } from "./known-fields.js";
import { limitState } from "./responses.js";

/** A member's role in a team. */
export const teamRole = z.enum(["admin", "user"]);
export type TeamRole = z.infer<typeof teamRole>;

/** Who a member entry names: `user_id`, or the `user_email` of an existing or new user. */
const memberWho = {
  user_id: identifier.nullish(),
  user_email: z.string().trim().min(3).max(320).nullish(),
};

/** Refuses an object naming neither `user_id` nor `user_email` (400 naming `user_id`). */
function namingUser<T extends z.ZodObject>(schema: T) {
  return schema.refine((m: Record<string, unknown>) => m.user_id != null || m.user_email != null, {
    message: "give user_id or user_email",
    path: ["user_id"],
  });
}

/** A member: a role and who (`user_id`, or `user_email` of an existing or new user). */
export const teamMember = namingUser(z.object({ role: teamRole.default("user"), ...memberWho }));
export type TeamMember = z.input<typeof teamMember>;

const teamFields = {
  team_alias: identifier.nullish(),
  ...limitFields,
  models: modelList.nullish(),
  metadata: metadata.nullish(),
  /**
   * LiteLLM's team `object_permission`, the MCP part: the MCP servers and tools the team's keys may reach (a key
   * without its own `mcp_servers` inherits them; a key with its own gets only those both name). `null` clears it
   * on `/team/update`.
   */
  object_permission: objectPermission.nullish(),
  blocked: z.boolean().nullish(),
};

/** `POST /team/new`: `team_id` omitted = a new UUID; `members_with_roles` become memberships. */
export const newTeamRequest = adminRequest(
  "/team/new",
  z.object({
    ...teamFields,
    team_id: identifier.nullish(),
    members_with_roles: z.array(teamMember).max(1000).nullish(),
  }),
);
export type NewTeamRequest = z.input<typeof newTeamRequest>;

/** `POST /team/update`: omitted fields unchanged, null clears (unlimited; `models: null` = every model). */
export const updateTeamRequest = adminRequest(
  "/team/update",
  z.object({ ...teamFields, team_id: identifier }),
);
export type UpdateTeamRequest = z.input<typeof updateTeamRequest>;

/** `POST /team/delete`: 1..100 team ids; the teams' keys are revoked. */
export const deleteTeamsRequest = z.object({ team_ids: z.array(identifier).min(1).max(100) });

/** `POST /team/block`, `POST /team/unblock`. */
export const blockTeamRequest = z.object({ team_id: identifier });

/** `GET /team/info?team_id=`. */
export const teamInfoQuery = z.object({ team_id: identifier });

/** `GET /team/list?user_id=&page=&page_size=` (page_size 1..100, default 100). */
export const listTeamsQuery = z.object({
  user_id: identifier.optional(),
  page: pageNumber(1),
  page_size: pageSize(100, 100),
});

/** `POST /team/member_add`: one member or a list; `max_budget_in_team` is the member's budget (USD, team period). */
export const teamMemberAddRequest = z.object({
  team_id: identifier,
  member: z.union([teamMember, z.array(teamMember).min(1).max(100)]),
  max_budget_in_team: money.nullish(),
});
export type TeamMemberAddRequest = z.input<typeof teamMemberAddRequest>;

/** `POST /team/member_update`: omitted fields unchanged, null clears. */
export const teamMemberUpdateRequest = namingUser(
  z.object({
    team_id: identifier,
    ...memberWho,
    role: teamRole.nullish(),
    max_budget_in_team: money.nullish(),
    tpm_limit: perMinute.nullish(),
    rpm_limit: perMinute.nullish(),
  }),
);
export type TeamMemberUpdateRequest = z.input<typeof teamMemberUpdateRequest>;

/** `POST /team/member_delete`. */
export const teamMemberDeleteRequest = namingUser(z.object({ team_id: identifier, ...memberWho }));

/** A member as listed in a team (`members_with_roles`). */
export const memberWithRole = z.looseObject({
  role: teamRole,
  user_id: z.string(),
  user_email: z.string().nullable(),
});

/** A team (`LiteLLM_TeamTable` fields the gateway keeps), rolled over to the current budget period. */
export const teamRecord = z.looseObject({
  team_id: z.string(),
  team_alias: z.string().nullable(),
  models: z.array(z.string()),
  ...limitState,
  metadata: z.record(z.string(), z.unknown()),
  object_permission: z.record(z.string(), z.unknown()).nullable().optional(),
  blocked: z.boolean(),
  members_with_roles: z.array(memberWithRole),
  admins: z.array(z.string()),
  members: z.array(z.string()),
  created_at: isoTime,
  updated_at: isoTime,
});
export type TeamRecord = z.infer<typeof teamRecord>;

/** A membership (`LiteLLM_TeamMembership`: spend and the member's budget row) with role and email. */
export const teamMembership = z.looseObject({
  team_id: z.string(),
  user_id: z.string(),
  user_email: z.string().nullable(),
  role: teamRole,
  spend: z.number(),
  max_budget_in_team: z.number().nullable(),
  litellm_budget_table: z
    .looseObject({
      max_budget: z.number().nullable(),
      budget_duration: z.string().nullable(),
      budget_reset_at: isoTime,
      tpm_limit: z.number().nullable(),
      rpm_limit: z.number().nullable(),
    })
    .nullable(),
});
export type TeamMembership = z.infer<typeof teamMembership>;

/** `GET /team/info`: the team, its keys (records as `/key/info` shows them) and its memberships. */
export const teamInfoResponse = z.looseObject({
  team_id: z.string(),
  team_info: teamRecord,
  keys: z.array(z.looseObject({ token: z.string(), team_id: z.string().nullable() })),
  team_memberships: z.array(teamMembership),
});
export type TeamInfoResponse = z.infer<typeof teamInfoResponse>;

/** `GET /team/list`: the teams (LiteLLM answers a plain list). */
export const listTeamsResponse = z.array(teamRecord);

/** `POST /team/delete`: the ids of the deleted teams and the hashes of the keys revoked with them. */
export const deleteTeamsResponse = z.looseObject({
  deleted_teams: z.array(z.string()),
  deleted_keys: z.array(z.string()),
});

/** `POST /team/member_add`: the team after the change, the users added and their memberships. */
export const teamMemberAddResponse = teamRecord.extend({
  updated_users: z.array(z.looseObject({ user_id: z.string() })),
  updated_team_memberships: z.array(teamMembership),
});

/** `POST /team/member_update` (LiteLLM's `TeamMemberUpdateResponse`). */
export const teamMemberUpdateResponse = z.looseObject({
  team_id: z.string(),
  user_id: z.string(),
  user_email: z.string().nullable(),
  role: teamRole,
  max_budget_in_team: z.number().nullable(),
  tpm_limit: z.number().nullable(),
  rpm_limit: z.number().nullable(),
});
