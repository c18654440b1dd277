/**
 * A team's members, managed by its admins (team role `admin`) and operators, through the gateway's
 * `/team/member_add`, `/team/member_update` and `/team/member_delete` (LiteLLM's); 403 for anyone else.
 *
 * - `POST /api/teams/:teamId/members`: add a console user by `user_email`, with `role` and `max_budget_in_team`.
 * - `POST /api/teams/:teamId/members/:userId`: change a member's role or budget in the team (null clears it).
 * - `DELETE /api/teams/:teamId/members/:userId`: remove a member (their keys of the team stay the team's).
 */
import { identifier, teamMemberEditInput, teamMemberInput } from "@platform/admin-api";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { invalidRequest, notFound, parseForm, parseInput } from "../errors.js";
import { teamFor } from "../teams/access.js";
import { consoleUserByEmail } from "../teams/members.js";
import { gatewayFor, type RouteContext } from "./context.js";
import { teamParams } from "./teams.js";

const memberParams = teamParams.extend({ userId: identifier });

/** Registers the member routes; see the module comment. */
export async function teamMemberRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  const sessions = { config: { access: "session" as const } };

  /** The team (the session must be its admin or an operator) and the member `:userId` of it. */
  async function memberOf(request: FastifyRequest) {
    const { teamId, userId } = parseInput(memberParams, request.params);
    const { info } = await teamFor(ctx, request, teamId, "admin");
    const member = info.team_memberships.find((m) => m.user_id === userId);
    if (member === undefined) throw notFound("No such member in this team.", "user_id");
    return { teamId, member };
  }

  app.post("/api/teams/:teamId/members", sessions, async (request, reply) => {
    const { teamId } = parseInput(teamParams, request.params);
    const { info } = await teamFor(ctx, request, teamId, "admin");
    const body = parseForm(teamMemberInput, request.body);
    const user = await consoleUserByEmail(ctx, body.user_email, "user_email");
    if (info.team_memberships.some((m) => m.user_id === user.user_id)) {
      throw invalidRequest(`${body.user_email} is already a member of this team.`, "user_email");
    }
    const added = await gatewayFor(ctx, request).addTeamMember({
      team_id: teamId,
      member: { role: body.role, user_id: user.user_id },
      max_budget_in_team: body.max_budget_in_team,
    });
    const membership = added.updated_team_memberships.find((m) => m.user_id === user.user_id);
    return reply.code(201).send(membership ?? null);
  });

  app.post("/api/teams/:teamId/members/:userId", sessions, async (request) => {
    const { teamId, member } = await memberOf(request);
    const body = parseForm(teamMemberEditInput, request.body);
    return gatewayFor(ctx, request).updateTeamMember({ team_id: teamId, user_id: member.user_id, ...body });
  });

  app.delete("/api/teams/:teamId/members/:userId", sessions, async (request) => {
    const { teamId, member } = await memberOf(request);
    await gatewayFor(ctx, request).deleteTeamMember({ team_id: teamId, user_id: member.user_id });
    return { removed: member.user_id };
  });
}
