/**
 * Who may do what with a team in the console. Three roles, from the session and the team's memberships
 * (LiteLLM's `members_with_roles`):
 * - `operator`: a console administrator (an operator, or a chat user with role `ADMIN`): every team, every action.
 * - `admin`: a member with team role `admin`: members, member budgets, team keys and spend of that team only.
 * - `user`: any other member: the team's summary and their own share.
 * Anyone else, and any question about a team that does not exist, is answered 403 (no hint whether it exists);
 * only operators see a 404 for an unknown team.
 */
import { AdminApiError, type TeamInfoResponse, type TeamMembership } from "@platform/admin-api";
import type { FastifyRequest } from "fastify";
import { forbidden, notFound } from "../errors.js";
import { type RouteContext, sessionOf } from "../routes/context.js";
import { isAdmin } from "../session/console-sessions.js";

/** The session's role in a team, strongest first. */
export type TeamAccess = "operator" | "admin" | "user";
const RANK: Record<TeamAccess, number> = { operator: 3, admin: 2, user: 1 };

/** A team as the session may see it: the gateway's `/team/info`, the session's role and own membership. */
export interface TeamView {
  info: TeamInfoResponse;
  access: TeamAccess;
  /** The session's membership in the team, or null (an operator who is not a member). */
  membership: TeamMembership | null;
}

/** The chat user id of the session, or null for an operator signed in with the master key. */
export function sessionUserId(request: FastifyRequest): string | null {
  const principal = sessionOf(request).principal;
  return principal.kind === "chat" ? principal.userId : null;
}

/**
 * Reads team `teamId` from the gateway and checks that the session has at least role `need` in it.
 * @throws ConsoleError 403 `permission_error` when it has not (or, for a non-operator, when the team does not
 *   exist); 404 for an operator asking about an unknown team; AdminApiError when the gateway fails.
 */
export async function teamFor(
  ctx: RouteContext,
  request: FastifyRequest,
  teamId: string,
  need: TeamAccess,
): Promise<TeamView> {
  const operator = isAdmin(sessionOf(request).principal);
  const userId = sessionUserId(request);
  const refused = forbidden(
    need === "operator"
      ? "Console administrators only."
      : `Not ${need === "admin" ? "an admin" : "a member"} of this team.`,
  );
  if (!operator && need === "operator") throw refused;
  let info: TeamInfoResponse;
  try {
    info = await ctx.gateway.teamInfo(teamId);
  } catch (error) {
    if (!(error instanceof AdminApiError && error.status === 404)) throw error;
    throw operator ? notFound(`No team with id "${teamId}".`, "team_id") : refused;
  }
  const membership = info.team_memberships.find((m) => userId !== null && m.user_id === userId) ?? null;
  const access: TeamAccess | null = operator ? "operator" : (membership?.role ?? null);
  if (access === null || RANK[access] < RANK[need]) throw refused;
  return { info, access, membership };
}
