/**
 * A team's keys for its services (keys of no user, bound by the team's limits), made and revoked by the team's
 * admins and operators; 403 for anyone else. The full key is in the generate response only (`no-store`), as
 * for personal keys.
 *
 * - `POST /api/teams/:teamId/keys`: body of `POST /api/keys`; the key's `team_id` is the team. Like a user, a
 *   team admin cannot grant MCP servers (`object_permission`: 403); the key inherits the team's grants.
 * - `DELETE /api/teams/:teamId/keys/:token`: revoke one of the team's keys (404 for a key of another team).
 */
import { keyHash } from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import { notFound, parseForm, parseInput } from "../errors.js";
import { teamFor } from "../teams/access.js";
import { teamKeys } from "../teams/spend.js";
import type { RouteContext } from "./context.js";
import { createKeyBody, generateConsoleKey, refuseOperatorFields, revokeKey } from "./keys.js";
import { teamParams } from "./teams.js";

const keyParams = teamParams.extend({ token: keyHash });

/** Registers the team key routes; see the module comment. */
export async function teamKeyRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  const sessions = { config: { access: "session" as const } };

  app.post("/api/teams/:teamId/keys", sessions, async (request, reply) => {
    const { teamId } = parseInput(teamParams, request.params);
    await teamFor(ctx, request, teamId, "admin");
    refuseOperatorFields(request.body);
    const body = parseForm(createKeyBody, request.body);
    return generateConsoleKey(ctx, request, reply, null, body, { owner: "The team", teamId });
  });

  app.delete("/api/teams/:teamId/keys/:token", sessions, async (request) => {
    const { teamId, token } = parseInput(keyParams, request.params);
    const { info } = await teamFor(ctx, request, teamId, "admin");
    if (!teamKeys(info).some((k) => k.token === token)) throw notFound("No such key in this team.", "token");
    return revokeKey(ctx, request, token);
  });
}
