/**
 * User management, LiteLLM's shapes (litellm/proxy/management_endpoints/internal_user_endpoints.py in
 * BerriAI/litellm): /user/new, /user/info, /user/update, /user/list, /user/delete.
 *
 * `/user/delete` (`{user_ids}`) revokes the users' keys (kept for their history, without an owner), removes
 * their team memberships and deletes them; an unknown id is a 404 and deletes nothing. A chat user deleted
 * this way is provisioned again with the defaults on its next chat call.
 *
 * `/user/new` is idempotent provisioning: for a `user_id` that exists it answers 200 with the stored user,
 * unchanged, `created: false` and a `message` saying nothing changed, naming each requested limit that
 * differs from the stored one (the console provisions on every first visit; a repeat must never reset a
 * budget an administrator raised, nor the spend). Changes go through `/user/update`.
 */
import { randomUUID } from "node:crypto";
import {
  deleteUsersRequest,
  userInfoQuery as infoQuery,
  listUsersQuery as listQuery,
  newUserRequest as newSchema,
  updateUserRequest as updateSchema,
} from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { appendChange, auditActor } from "../../audit/record.js";
import { withTransaction } from "../../db/transaction.js";
import type { KeyRecord } from "../../keys/records.js";
import { presentKey } from "../../keys/records.js";
import { listKeys, revokeKeys } from "../../keys/repository.js";
import { listMembershipsOfUsers } from "../../teams/repository.js";
import { presentUser, type UserRecord } from "../../users/records.js";
import { deleteUsers, findUser, insertUserIfAbsent, listUsers, updateUser } from "../../users/repository.js";
import { auditEndedMemberships, auditRevokedKeys } from "./cascade-audit.js";
import { type AdminContext, adminRoute, publishChanges } from "./context.js";
import { notFound, parse } from "./validation.js";

/** Omitted → the organisation default; explicit null → unlimited. */
const orDefault = <T>(value: T | null | undefined, fallback: T): T | null =>
  value === undefined ? fallback : value;

/** The fields of a /user/new body and the stored user's values they are compared with. */
const COMPARED = {
  max_budget: (u: UserRecord) => u.maxBudget,
  budget_duration: (u: UserRecord) => u.budgetDuration,
  tpm_limit: (u: UserRecord) => u.tpmLimit,
  rpm_limit: (u: UserRecord) => u.rpmLimit,
  max_parallel_requests: (u: UserRecord) => u.maxParallelRequests,
  user_email: (u: UserRecord) => u.userEmail,
  user_role: (u: UserRecord) => u.userRole,
} as const;

/** What /user/new says for a user that exists: nothing changed, which requested values differ, and how to change them. */
function unchangedMessage(user: UserRecord, body: z.infer<typeof newSchema>): string {
  const differences = Object.entries(COMPARED)
    .filter(([field, stored]) => {
      const requested = body[field as keyof typeof COMPARED];
      return requested !== undefined && requested !== stored(user);
    })
    .map(([field, stored]) => {
      const requested = body[field as keyof typeof COMPARED];
      return `${field}: stored ${JSON.stringify(stored(user))}, requested ${JSON.stringify(requested)}`;
    });
  const base = `User "${user.userId}" already exists; /user/new changed nothing`;
  return differences.length === 0
    ? `${base}.`
    : `${base} (${differences.join("; ")}). To change them, call POST /user/update with the user_id and the new values.`;
}

/** Registers the /user/* routes. */
export function registerUserRoutes(app: FastifyInstance, context: AdminContext): void {
  const { pool, clock, userDefaults } = context;

  adminRoute(app, "POST", "/user/new", async (request) => {
    const body = parse(newSchema, request.body);
    const who = auditActor(request);
    const now = clock.now();
    const { user, created } = await withTransaction(pool, async (client) => {
      const result = await insertUserIfAbsent(
        client,
        {
          userId: body.user_id ?? randomUUID(),
          userEmail: body.user_email ?? null,
          userRole: body.user_role ?? "internal_user",
          maxBudget: orDefault(body.max_budget, userDefaults.maxBudget),
          budgetDuration: orDefault(body.budget_duration, userDefaults.budgetDuration),
          tpmLimit: orDefault(body.tpm_limit, userDefaults.tpmLimit),
          rpmLimit: orDefault(body.rpm_limit, userDefaults.rpmLimit),
          maxParallelRequests: body.max_parallel_requests ?? null,
          metadata: body.metadata ?? {},
        },
        now,
      );
      if (result.created) {
        const target = { userId: result.user.userId };
        const after = presentUser(result.user, now);
        await appendChange(client, who, { action: "user.new", target, before: null, after }, now);
      }
      return result;
    });
    if (created) {
      request.log.info({ userId: user.userId }, "user created");
      return { ...presentUser(user, now), created };
    }
    return { ...presentUser(user, now), created, message: unchangedMessage(user, body) };
  });

  adminRoute(app, "GET", "/user/info", async (request) => {
    const query = parse(infoQuery, request.query);
    const user = await findUser(pool, query.user_id);
    if (user === null) throw notFound(`No user with user_id "${query.user_id}".`, "user_id");
    const { keys } = await listKeys(pool, { userId: user.userId }, 1, 1000);
    const now = clock.now();
    return {
      user_id: user.userId,
      user_info: presentUser(user, now),
      keys: keys.map((k) => presentKey(k, now)),
    };
  });

  adminRoute(app, "POST", "/user/update", async (request) => {
    const body = parse(updateSchema, request.body);
    const who = auditActor(request);
    const now = clock.now();
    const { user_id: userId, metadata: newMetadata, ...patch } = body;
    const user = await withTransaction(pool, async (client) => {
      const before = await findUser(client, userId, true);
      if (before === null) return null;
      const after = await updateUser(
        client,
        userId,
        { ...patch, metadata: newMetadata === null ? {} : newMetadata },
        now,
      );
      if (after !== null) {
        const change = { before: presentUser(before, now), after: presentUser(after, now) };
        await appendChange(client, who, { action: "user.update", target: { userId }, ...change }, now);
      }
      return after;
    });
    if (user === null) throw notFound(`No user with user_id "${userId}".`, "user_id");
    await publishChanges(context, { user });
    return presentUser(user, now);
  });

  adminRoute(app, "GET", "/user/list", async (request) => {
    const query = parse(listQuery, request.query);
    const { users, total } = await listUsers(pool, query.page, query.page_size);
    const now = clock.now();
    return {
      users: users.map((u) => presentUser(u, now)),
      total,
      page: query.page,
      page_size: query.page_size,
      total_pages: Math.ceil(total / query.page_size),
    };
  });

  adminRoute(app, "POST", "/user/delete", async (request) => {
    const body = parse(deleteUsersRequest, request.body);
    const who = auditActor(request);
    const userIds = [...new Set(body.user_ids)];
    const now = clock.now();
    const revoked = await withTransaction(pool, async (client) => {
      const keys: KeyRecord[] = [];
      for (const userId of userIds) {
        const user = await findUser(client, userId, true);
        if (user === null) throw notFound(`No user with user_id "${userId}".`, "user_ids");
        const owned = await listKeys(client, { userId }, 1, 100_000);
        const revokedNow = await revokeKeys(
          client,
          owned.keys.map((k) => k.token),
          now,
        );
        keys.push(...revokedNow);
        await auditRevokedKeys(client, who, owned.keys, revokedNow, now);
        await auditEndedMemberships(client, who, await listMembershipsOfUsers(client, [userId]), now);
        const before = presentUser(user, now);
        await appendChange(
          client,
          who,
          { action: "user.delete", target: { userId }, before, after: null },
          now,
        );
      }
      await deleteUsers(client, userIds);
      return keys;
    });
    // Every instance refuses the revoked keys at once (the messages carry them as they were, owner included).
    await publishChanges(context, { keys: revoked });
    request.log.info({ userIds, revokedKeys: revoked.length }, "users deleted");
    // LiteLLM answers the number of users deleted (its delete_user returns Prisma's delete_many count).
    return userIds.length;
  });
}
