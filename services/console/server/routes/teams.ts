/**
 * The Teams view's API: teams in LiteLLM's shapes through the gateway's `/team/*` (docs/teams.md), every route
 * checking the session's role in the team (`teams/access.ts`; 403 otherwise).
 *
 * - `GET /api/teams`: operators every team; others the teams they are a member of, with their role.
 * - `POST /api/teams` (operators): a new team (`team_alias`, limits, `models`, optional `admin_email`, and its
 *   MCP grants `object_permission`, which only operators set and see).
 * - `GET /api/teams/:teamId` (members): the team; admins and operators also its members and keys, a member
 *   only their own membership (spend and budget in the team).
 * - `POST /api/teams/:teamId` (operators): change name, limits, models, MCP grants (`object_permission`; null
 *   clears them).
 * - `POST /api/teams/:teamId/block`, `/unblock` (operators): refuse or re-admit every key of the team.
 * - `DELETE /api/teams/:teamId` (operators): delete the team (its keys are revoked).
 * - `GET /api/teams/:teamId/spend?days=7|30|90` (team admins, operators): spend by member, key and model.
 * Members: `team-members.ts`; team keys: `team-keys.ts`.
 */
import { identifier, type TeamRecord, teamEditInput, teamInput } from "@platform/admin-api";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { parseForm, parseInput } from "../errors.js";
import { isAdmin } from "../session/console-sessions.js";
import { sessionUserId, type TeamView, teamFor } from "../teams/access.js";
import { consoleUserByEmail } from "../teams/members.js";
import { teamKeys, teamSpend } from "../teams/spend.js";
import { usagePeriod } from "../usage-period.js";
import { gatewayFor, type RouteContext, sessionOf } from "./context.js";
import { presentKey } from "./keys.js";

/** `:teamId` of the team routes. */
export const teamParams = z.object({ teamId: identifier });

/** Most teams listed (pages of 100). */
const MAX_TEAMS = 1000;

/**
 * The fields of a team the console shows; `operator`: also its MCP grants (`object_permission`, null when none),
 * which only operators set and see.
 */
export function presentTeam(team: TeamRecord, operator = false) {
  return {
    ...(operator ? { object_permission: team.object_permission ?? null } : {}),
    team_id: team.team_id,
    team_alias: team.team_alias,
    models: team.models,
    spend: team.spend,
    max_budget: team.max_budget,
    budget_duration: team.budget_duration,
    budget_reset_at: team.budget_reset_at,
    tpm_limit: team.tpm_limit,
    rpm_limit: team.rpm_limit,
    blocked: team.blocked,
    members: team.members_with_roles.length,
  };
}

/** The team as the session may see it: members and keys only for admins and operators. */
function teamDetail({ info, access, membership }: TeamView) {
  const manage = access !== "user";
  return {
    team: presentTeam(info.team_info, access === "operator"),
    access,
    membership,
    members: manage ? info.team_memberships : null,
    keys: manage ? teamKeys(info).map((k) => ({ ...presentKey(k), user_id: k.user_id })) : null,
  };
}

/** Every team page by page (`user_id`: that user's teams), at most {@link MAX_TEAMS}. */
export async function listAllTeams(ctx: RouteContext, userId?: string): Promise<TeamRecord[]> {
  const teams: TeamRecord[] = [];
  for (let page = 1; teams.length < MAX_TEAMS; page++) {
    const batch = await ctx.gateway.listTeams({ user_id: userId, page, page_size: 100 });
    teams.push(...batch);
    if (batch.length < 100) break;
  }
  return teams;
}

/** The session's role in `team` as listed: the operator's, else the member's. */
function roleIn(team: TeamRecord, userId: string | null, operator: boolean) {
  if (operator) return "operator" as const;
  return team.members_with_roles.find((m) => m.user_id === userId)?.role ?? null;
}

/** Registers the team routes; see the module comment. */
export async function teamRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  const operators = { config: { access: "admin" as const } };
  const sessions = { config: { access: "session" as const } };
  const teamOf = async (request: FastifyRequest, need: "operator" | "admin" | "user") =>
    teamFor(ctx, request, parseInput(teamParams, request.params).teamId, need);

  app.get("/api/teams", sessions, async (request) => {
    const userId = sessionUserId(request);
    const operator = isAdmin(sessionOf(request).principal);
    const teams = await listAllTeams(ctx, operator ? undefined : (userId ?? undefined));
    return {
      teams: teams.map((t) => ({ ...presentTeam(t, operator), access: roleIn(t, userId, operator) })),
    };
  });

  app.post("/api/teams", operators, async (request, reply) => {
    const { admin_email: adminEmail, team_alias: alias, ...limits } = parseForm(teamInput, request.body);
    const admin = adminEmail === undefined ? null : await consoleUserByEmail(ctx, adminEmail, "admin_email");
    const team = await gatewayFor(ctx, request).newTeam({
      team_alias: alias,
      ...limits,
      members_with_roles: admin === null ? [] : [{ role: "admin", user_id: admin.user_id }],
    });
    request.log.info({ teamId: team.team_id }, "team created through the console");
    return reply.code(201).send(presentTeam(team, true));
  });

  app.get("/api/teams/:teamId", sessions, async (request) => teamDetail(await teamOf(request, "user")));

  app.post("/api/teams/:teamId", sessions, async (request) => {
    const { info } = await teamOf(request, "operator");
    const body = parseForm(teamEditInput, request.body);
    const team = await gatewayFor(ctx, request).updateTeam({
      team_id: info.team_id,
      ...body,
      models: body.models === undefined ? undefined : (body.models ?? []),
    });
    return presentTeam(team, true);
  });

  for (const [action, blocked] of [
    ["block", true],
    ["unblock", false],
  ] as const) {
    app.post(`/api/teams/:teamId/${action}`, sessions, async (request) => {
      const { info } = await teamOf(request, "operator");
      return presentTeam(await gatewayFor(ctx, request).blockTeam(info.team_id, blocked), true);
    });
  }

  app.delete("/api/teams/:teamId", sessions, async (request) => {
    const { info } = await teamOf(request, "operator");
    return gatewayFor(ctx, request).deleteTeams([info.team_id]);
  });

  app.get("/api/teams/:teamId/spend", sessions, async (request) => {
    const period = parseInput(usagePeriod, request.query);
    const { info } = await teamOf(request, "admin");
    return teamSpend(ctx.gateway, info, period);
  });
}
