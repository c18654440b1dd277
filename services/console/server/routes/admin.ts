/**
 * The Admin view's API (administrators: chat role `ADMIN`, or an operator signed in with the master key).
 *
 * - `GET /api/admin/users`: every user with spend, budget and limits.
 * - `POST /api/admin/users/:userId`: set a user's `max_budget`, `budget_duration`, `tpm_limit`, `rpm_limit`
 *   (null = unlimited; omitted = unchanged).
 * - `GET /api/admin/users/:userId/keys`: that user's keys.
 * - `POST /api/admin/keys`: generate a key for any user (`user_id`) or, without `user_id`, a key of no user
 *   (the operator's own use); the body is otherwise `POST /api/keys`'s, plus its MCP grants
 *   (`object_permission`, operators only). The full key is in this response only.
 * - `GET /api/admin/keys`: every key (of a user, of no user, of a team, the chat's service key, revoked and
 *   expired ones) with its owner's id and email, its team's alias (`team_alias`, null without a team or alias),
 *   `blocked`, and `service` (a key whose calls are booked on the chat user they name).
 * - `POST /api/admin/keys/:token`: change any key (the body of `POST /api/keys/:token`, plus its MCP grants,
 *   LiteLLM's `object_permission`: operators only, `/key/update` audits the change).
 * - `GET /api/admin/mcp-servers`: the gateway's declared MCP servers with their tools (`GET /v1/mcp/server`).
 * - `DELETE /api/admin/keys/:token`: revoke any key.
 * - `POST /api/admin/keys/:token/block` and `/unblock`: block any key (refused by the gateway, 401, until
 *   unblocked) or unblock it; audited by the gateway as `key.block` / `key.unblock`. Operators only, like
 *   revoking any key: a key's owner cannot block or unblock it (an owner's unblock would undo an operator's block).
 * - `GET /api/admin/spend?days=7|30|90` or `?from=&to=`: platform spend (every request) per day, model and key.
 * - `GET /api/admin/audit?actor=&action=&user_id=&key_alias=&page=&page_size=`: the gateway's audit log.
 */
import {
  auditLogsQuery,
  identifier,
  limitInput,
  objectPermission,
  withBudgetForPeriod,
} from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { parseForm, parseInput } from "../errors.js";
import { allKeys, allUsers, platformSpend } from "../platform-spend.js";
import { usagePeriod } from "../usage-period.js";
import { gatewayFor, type RouteContext } from "./context.js";
import {
  blockConsoleKey,
  createKeyFields,
  editConsoleKey,
  generateConsoleKey,
  operatorEditKeyBody,
  ownedKey,
  presentKey,
  revokeKey,
} from "./keys.js";
import { listAllTeams } from "./teams.js";

const userParams = z.object({ userId: identifier });
const tokenParams = z.object({
  token: z.string().regex(/^[0-9a-f]{64}$/, { message: "expected a key hash" }),
});
/**
 * `POST /api/admin/keys` body: `POST /api/keys`'s, plus the owner (omitted or null: no user) and the key's MCP
 * grants (LiteLLM's `object_permission`; omitted or null: none).
 */
const adminKeyBody = withBudgetForPeriod(
  createKeyFields.extend({ user_id: identifier.nullish(), object_permission: objectPermission.nullish() }),
);

/** Registers the `/api/admin/*` routes (administrators only). */
export async function adminRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  const admin = { config: { access: "admin" as const } };

  app.get("/api/admin/users", admin, async () => ({ users: await allUsers(ctx.gateway) }));

  app.post("/api/admin/users/:userId", admin, async (request) => {
    const { userId } = parseInput(userParams, request.params);
    const limits = parseForm(limitInput, request.body);
    const user = await gatewayFor(ctx, request).updateUser({ user_id: userId, ...limits });
    request.log.info({ userId, fields: Object.keys(limits) }, "user limits changed by an administrator");
    return user;
  });

  app.get("/api/admin/users/:userId/keys", admin, async (request) => {
    const { userId } = parseInput(userParams, request.params);
    const info = await ctx.gateway.userInfo(userId);
    return { user: info.user_info, keys: info.keys.map(presentKey) };
  });

  app.post("/api/admin/keys", admin, async (request, reply) => {
    const { user_id: userId, ...body } = parseForm(adminKeyBody, request.body);
    return generateConsoleKey(ctx, request, reply, userId ?? null, body, { owner: "This user" });
  });

  app.get("/api/admin/keys", admin, async () => {
    const [keys, users, teams] = await Promise.all([
      allKeys(ctx.gateway),
      allUsers(ctx.gateway),
      listAllTeams(ctx),
    ]);
    const emails = new Map(users.map((u) => [u.user_id, u.user_email]));
    const aliases = new Map(teams.map((t) => [t.team_id, t.team_alias]));
    return {
      keys: keys.map((k) => ({
        ...presentKey(k),
        user_id: k.user_id,
        user_email: k.user_id === null ? null : (emails.get(k.user_id) ?? null),
        team_alias: k.team_id == null ? null : (aliases.get(k.team_id) ?? null),
        service: k.metadata.user_headers === true,
        object_permission: k.object_permission ?? null,
      })),
    };
  });

  app.post("/api/admin/keys/:token", admin, async (request) => {
    const { token } = parseInput(tokenParams, request.params);
    const body = parseForm(operatorEditKeyBody, request.body);
    const key = await ownedKey(ctx, token, null);
    return editConsoleKey(ctx, request, key, body, key.user_id === null ? "You" : "This user");
  });

  app.delete("/api/admin/keys/:token", admin, async (request) => {
    const { token } = parseInput(tokenParams, request.params);
    await ownedKey(ctx, token, null);
    return revokeKey(ctx, request, token);
  });

  for (const [action, blocked] of [
    ["block", true],
    ["unblock", false],
  ] as const) {
    app.post(`/api/admin/keys/:token/${action}`, admin, async (request) => {
      const { token } = parseInput(tokenParams, request.params);
      await ownedKey(ctx, token, null);
      return blockConsoleKey(ctx, request, token, blocked);
    });
  }

  app.get("/api/admin/mcp-servers", admin, async () => ({ servers: await ctx.gateway.mcpServers() }));

  app.get("/api/admin/spend", admin, async (request) => {
    return platformSpend(ctx.gateway, parseInput(usagePeriod, request.query));
  });

  app.get("/api/admin/audit", admin, async (request) => {
    const query = parseInput(auditLogsQuery, request.query);
    return ctx.gateway.auditLogs(query);
  });
}
