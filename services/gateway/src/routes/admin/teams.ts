/**
 * Team management, LiteLLM's shapes (litellm/proxy/management_endpoints/team_endpoints.py in BerriAI/litellm;
 * docs.litellm.ai/docs/proxy/team_budgets): /team/new, /team/update, /team/delete, /team/info, /team/list,
 * /team/block, /team/unblock. Members: `team-members.ts`. Every write is audited (`team.*`) in its transaction
 * and published on the invalidation bus, so every instance applies a team's new limits, models and `blocked`
 * to its cached team keys at once.
 *
 * Deleting a team revokes its keys (LiteLLM deletes them; revoking keeps their spend history) and removes its
 * memberships; each revoked key and each ended membership gets its own audit row (`cascade-audit.ts`).
 */
import { randomUUID } from "node:crypto";
import {
  blockTeamRequest,
  deleteTeamsRequest,
  listTeamsQuery,
  newTeamRequest,
  teamInfoQuery,
  updateTeamRequest,
} from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import { appendChange, auditActor } from "../../audit/record.js";
import { withTransaction } from "../../db/transaction.js";
import { invalidRequest } from "../../errors/gateway-error.js";
import { type KeyRecord, presentKey } from "../../keys/records.js";
import { listKeys, revokeKeys } from "../../keys/repository.js";
import { presentMembership, presentTeam, type TeamRecord } from "../../teams/records.js";
import {
  deleteTeams,
  findTeam,
  insertTeam,
  listMembers,
  listTeams,
  membersWithRoles,
  updateTeam,
} from "../../teams/repository.js";
import { auditEndedMemberships, auditRevokedKeys } from "./cascade-audit.js";
import { type AdminContext, adminRoute, publishChanges } from "./context.js";
import { addMembers } from "./team-members.js";
import { teamView, unknownTeam } from "./team-view.js";
import { assertMcpServers, parse } from "./validation.js";

/** Registers the /team/* routes (members: {@link addMembers} and `team-members.ts`). */
export function registerTeamRoutes(app: FastifyInstance, context: AdminContext): void {
  const { pool, clock } = context;

  adminRoute(app, "POST", "/team/new", async (request) => {
    const body = parse(newTeamRequest, request.body);
    assertMcpServers(body.object_permission, context.mcpServerNames ?? []);
    const who = auditActor(request);
    const now = clock.now();
    const teamId = body.team_id ?? randomUUID();
    const { team, view } = await withTransaction(pool, async (client) => {
      const inserted = await insertTeam(
        client,
        {
          teamId,
          teamAlias: body.team_alias ?? null,
          models: body.models ?? [],
          maxBudget: body.max_budget ?? null,
          budgetDuration: body.budget_duration ?? null,
          tpmLimit: body.tpm_limit ?? null,
          rpmLimit: body.rpm_limit ?? null,
          maxParallelRequests: body.max_parallel_requests ?? null,
          metadata: body.metadata ?? {},
          objectPermission: body.object_permission ?? null,
          blocked: body.blocked ?? false,
        },
        now,
      );
      if (inserted === null) {
        throw invalidRequest(`team_id "${teamId}" already exists; use /team/update to change it.`, "team_id");
      }
      const target = { teamId };
      const created = await teamView(client, inserted, now);
      await appendChange(client, who, { action: "team.new", target, before: null, after: created }, now);
      const members = body.members_with_roles ?? [];
      if (members.length > 0) {
        await addMembers(client, context, who, inserted, members, null, now);
      }
      return { team: inserted, view: await teamView(client, inserted, now) };
    });
    await publishChanges(context, { team });
    request.log.info({ teamId }, "team created");
    return view;
  });

  adminRoute(app, "POST", "/team/update", async (request) => {
    const body = parse(updateTeamRequest, request.body);
    assertMcpServers(body.object_permission, context.mcpServerNames ?? []);
    const who = auditActor(request);
    const now = clock.now();
    const { team_id: teamId, ...fields } = body;
    const result = await withTransaction(pool, async (client) => {
      const before = await findTeam(client, teamId, "update");
      if (before === null) return null;
      const after = await updateTeam(
        client,
        teamId,
        {
          team_alias: fields.team_alias,
          models: fields.models === null ? [] : fields.models,
          max_budget: fields.max_budget,
          budget_duration: fields.budget_duration,
          tpm_limit: fields.tpm_limit,
          rpm_limit: fields.rpm_limit,
          max_parallel_requests: fields.max_parallel_requests,
          metadata: fields.metadata === null ? {} : fields.metadata,
          object_permission: fields.object_permission,
          blocked: fields.blocked ?? undefined,
        },
        now,
      );
      if (after === null) return null;
      const change = {
        before: await teamView(client, before, now),
        after: await teamView(client, after, now),
      };
      await appendChange(client, who, { action: "team.update", target: { teamId }, ...change }, now);
      return { team: after, view: change.after };
    });
    if (result === null) throw unknownTeam(teamId);
    await publishChanges(context, { team: result.team });
    return result.view;
  });

  for (const [url, blocked] of [
    ["/team/block", true],
    ["/team/unblock", false],
  ] as const) {
    adminRoute(app, "POST", url, async (request) => {
      const { team_id: teamId } = parse(blockTeamRequest, request.body);
      const who = auditActor(request);
      const now = clock.now();
      const result = await withTransaction(pool, async (client) => {
        const before = await findTeam(client, teamId, "update");
        if (before === null) return null;
        const after = await updateTeam(client, teamId, { blocked }, now);
        if (after === null) return null;
        const change = { before: { blocked: before.blocked }, after: { blocked: after.blocked } };
        const action = blocked ? "team.block" : "team.unblock";
        await appendChange(client, who, { action, target: { teamId }, ...change }, now);
        return { team: after, view: await teamView(client, after, now) };
      });
      if (result === null) throw unknownTeam(teamId);
      await publishChanges(context, { team: result.team });
      request.log.info({ teamId }, blocked ? "team blocked" : "team unblocked");
      return result.view;
    });
  }

  adminRoute(app, "POST", "/team/delete", async (request) => {
    const body = parse(deleteTeamsRequest, request.body);
    const who = auditActor(request);
    const teamIds = [...new Set(body.team_ids)];
    const now = clock.now();
    const result = await withTransaction(pool, async (client) => {
      const found: TeamRecord[] = [];
      for (const teamId of teamIds) {
        const team = await findTeam(client, teamId, "update");
        if (team === null) throw unknownTeam(teamId);
        found.push(team);
      }
      const revoked: KeyRecord[] = [];
      for (const team of found) {
        const { keys } = await listKeys(client, { teamId: team.teamId }, 1, 100_000);
        const revokedNow = await revokeKeys(
          client,
          keys.map((k) => k.token),
          now,
        );
        revoked.push(...revokedNow);
        await auditRevokedKeys(client, who, keys, revokedNow, now);
        await auditEndedMemberships(client, who, await listMembers(client, [team.teamId]), now);
        const before = await teamView(client, team, now);
        await appendChange(
          client,
          who,
          { action: "team.delete", target: { teamId: team.teamId }, before, after: null },
          now,
        );
      }
      await deleteTeams(client, teamIds);
      return { teams: found, revoked };
    });
    // Every instance refuses the revoked keys at once; nothing else refers to a deleted team.
    await publishChanges(context, { keys: result.revoked });
    request.log.info({ teamIds, revokedKeys: result.revoked.length }, "teams deleted");
    return {
      deleted_teams: result.teams.map((t) => t.teamId),
      deleted_keys: result.revoked.map((k) => k.token),
    };
  });

  adminRoute(app, "GET", "/team/info", async (request) => {
    const { team_id: teamId } = parse(teamInfoQuery, request.query);
    const team = await findTeam(pool, teamId);
    if (team === null) throw unknownTeam(teamId);
    const now = clock.now();
    const [members, { keys }] = await Promise.all([
      listMembers(pool, [teamId]),
      listKeys(pool, { teamId }, 1, 1000),
    ]);
    return {
      team_id: teamId,
      team_info: presentTeam(team, membersWithRoles(members, teamId), now),
      keys: keys.map((k) => presentKey(k, now)),
      team_memberships: members.map((m) => presentMembership(m.member, m.userEmail, now)),
    };
  });

  adminRoute(app, "GET", "/team/list", async (request) => {
    const query = parse(listTeamsQuery, request.query);
    const { teams } = await listTeams(pool, query.page, query.page_size, query.user_id);
    const members = await listMembers(
      pool,
      teams.map((t) => t.teamId),
    );
    const now = clock.now();
    return teams.map((team) => presentTeam(team, membersWithRoles(members, team.teamId), now));
  });
}
