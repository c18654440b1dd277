/**
 * Team members, LiteLLM's shapes (litellm/proxy/management_endpoints/team_endpoints.py in BerriAI/litellm):
 * /team/member_add, /team/member_update, /team/member_delete. A member is named by `user_id` or `user_email`;
 * member_add creates a user that does not exist yet (as /user/new does, with the gateway's default limits), as
 * LiteLLM does. `max_budget_in_team` (USD) is the member's budget in the team, in the team's budget period: a
 * team key of that user is refused once the member's share is spent, while the rest of the team goes on.
 */
import { randomUUID } from "node:crypto";
import {
  type TeamMember,
  teamMemberAddRequest,
  teamMemberDeleteRequest,
  teamMemberUpdateRequest,
} from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import { type AuditActor, appendChange, auditActor } from "../../audit/record.js";
import type { Queryable } from "../../db/transaction.js";
import { withTransaction } from "../../db/transaction.js";
import { invalidRequest } from "../../errors/gateway-error.js";
import { type MembershipRecord, presentMembership, type TeamRecord } from "../../teams/records.js";
import {
  deleteMembership,
  findMembership,
  findTeam,
  insertMembership,
  updateMembership,
} from "../../teams/repository.js";
import { presentUser, type UserRecord } from "../../users/records.js";
import { defaultUser, findUser, findUserByEmail, insertUserIfAbsent } from "../../users/repository.js";
import { type AdminContext, adminRoute, publishChanges } from "./context.js";
import { teamView, unknownTeam } from "./team-view.js";
import { notFound, parse } from "./validation.js";

type Who = { user_id?: string | null | undefined; user_email?: string | null | undefined };

/** The user a member entry names (by id, else by email), or null. */
async function findNamedUser(db: Queryable, who: Who): Promise<UserRecord | null> {
  if (who.user_id != null) return findUser(db, who.user_id);
  return who.user_email == null ? null : findUserByEmail(db, who.user_email);
}

/** The user a member entry names, created with the gateway's default limits when there is none. */
async function ensureUser(
  db: Queryable,
  context: AdminContext,
  actor: AuditActor,
  who: Who,
  now: number,
): Promise<UserRecord> {
  const found = await findNamedUser(db, who);
  if (found !== null) return found;
  const userId = who.user_id ?? randomUUID();
  const fresh = defaultUser(userId, who.user_email ?? null, context.userDefaults);
  const { user, created } = await insertUserIfAbsent(db, fresh, now);
  if (created) {
    const after = presentUser(user, now);
    await appendChange(
      db,
      actor,
      { action: "user.new", target: { userId: user.userId }, before: null, after },
      now,
    );
  }
  return user;
}

/**
 * Adds members to `team` inside the caller's transaction (creating users that do not exist), each with the
 * member budget `maxBudgetInTeam` (USD, the team's period; null = none), and audits each.
 * @returns the users and the new memberships.
 * @throws GatewayError 400 naming `member` when a user is a member of the team already.
 */
export async function addMembers(
  db: Queryable,
  context: AdminContext,
  actor: AuditActor,
  team: TeamRecord,
  members: TeamMember[],
  maxBudgetInTeam: number | null,
  now: number,
): Promise<{ users: UserRecord[]; memberships: MembershipRecord[] }> {
  const users: UserRecord[] = [];
  const memberships: MembershipRecord[] = [];
  for (const entry of members) {
    const user = await ensureUser(db, context, actor, entry, now);
    const membership = await insertMembership(
      db,
      {
        teamId: team.teamId,
        userId: user.userId,
        role: entry.role ?? "user",
        maxBudget: maxBudgetInTeam,
        budgetDuration: team.budgetDuration,
        tpmLimit: null,
        rpmLimit: null,
      },
      now,
    );
    if (membership === null) {
      throw invalidRequest(
        `User "${user.userId}" is already a member of team "${team.teamId}"; change the membership with /team/member_update.`,
        "member",
      );
    }
    const target = { teamId: team.teamId, userId: user.userId };
    const after = presentMembership(membership, user.userEmail, now);
    await appendChange(db, actor, { action: "team.member_add", target, before: null, after }, now);
    users.push(user);
    memberships.push(membership);
  }
  return { users, memberships };
}

/** The membership a request names, locked; 404 when the team, the user or the membership does not exist. */
async function lockedMembership(db: Queryable, teamId: string, who: Who) {
  const team = await findTeam(db, teamId, "share");
  if (team === null) throw unknownTeam(teamId);
  const user = await findNamedUser(db, who);
  const named = who.user_id ?? who.user_email;
  if (user === null) throw notFound(`No user "${named}".`, "user_id");
  const member = await findMembership(db, teamId, user.userId, true);
  if (member === null) throw notFound(`User "${named}" is not a member of team "${teamId}".`, "user_id");
  return { team, user, member };
}

/** Registers /team/member_add, /team/member_update and /team/member_delete. */
export function registerTeamMemberRoutes(app: FastifyInstance, context: AdminContext): void {
  const { pool, clock } = context;

  adminRoute(app, "POST", "/team/member_add", async (request) => {
    const body = parse(teamMemberAddRequest, request.body);
    const who = auditActor(request);
    const now = clock.now();
    const members = Array.isArray(body.member) ? body.member : [body.member];
    const result = await withTransaction(pool, async (client) => {
      const team = await findTeam(client, body.team_id, "share");
      if (team === null) throw unknownTeam(body.team_id);
      const added = await addMembers(
        client,
        context,
        who,
        team,
        members,
        body.max_budget_in_team ?? null,
        now,
      );
      return { ...added, view: await teamView(client, team, now) };
    });
    await publishChanges(context, {
      members: result.memberships.map((member) => ({ member, deleted: false })),
    });
    const emails = new Map(result.users.map((u) => [u.userId, u.userEmail]));
    return {
      ...result.view,
      updated_users: result.users.map((u) => presentUser(u, now)),
      updated_team_memberships: result.memberships.map((m) =>
        presentMembership(m, emails.get(m.userId) ?? null, now),
      ),
    };
  });

  adminRoute(app, "POST", "/team/member_update", async (request) => {
    const body = parse(teamMemberUpdateRequest, request.body);
    const who = auditActor(request);
    const now = clock.now();
    const result = await withTransaction(pool, async (client) => {
      const { user, member } = await lockedMembership(client, body.team_id, body);
      const after = await updateMembership(
        client,
        body.team_id,
        user.userId,
        {
          role: body.role ?? undefined,
          max_budget: body.max_budget_in_team,
          tpm_limit: body.tpm_limit,
          rpm_limit: body.rpm_limit,
        },
        now,
      );
      if (after === null) throw notFound(`User "${user.userId}" left team "${body.team_id}".`, "user_id");
      const target = { teamId: body.team_id, userId: user.userId };
      const [was, is] = [
        presentMembership(member, user.userEmail, now),
        presentMembership(after, user.userEmail, now),
      ];
      await appendChange(client, who, { action: "team.member_update", target, before: was, after: is }, now);
      return { user, member: after };
    });
    await publishChanges(context, { members: [{ member: result.member, deleted: false }] });
    return {
      team_id: result.member.teamId,
      user_id: result.member.userId,
      user_email: result.user.userEmail,
      role: result.member.role,
      max_budget_in_team: result.member.maxBudget,
      tpm_limit: result.member.tpmLimit,
      rpm_limit: result.member.rpmLimit,
    };
  });

  adminRoute(app, "POST", "/team/member_delete", async (request) => {
    const body = parse(teamMemberDeleteRequest, request.body);
    const who = auditActor(request);
    const now = clock.now();
    const result = await withTransaction(pool, async (client) => {
      const { team, user, member } = await lockedMembership(client, body.team_id, body);
      await deleteMembership(client, body.team_id, user.userId);
      const target = { teamId: body.team_id, userId: user.userId };
      const before = presentMembership(member, user.userEmail, now);
      await appendChange(client, who, { action: "team.member_delete", target, before, after: null }, now);
      return { member: { ...member, updatedAt: now }, view: await teamView(client, team, now) };
    });
    await publishChanges(context, { members: [{ member: result.member, deleted: true }] });
    return result.view;
  });
}
