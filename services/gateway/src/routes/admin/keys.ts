/**
 * Key management, LiteLLM's shapes (litellm/proxy/management_endpoints/key_management_endpoints.py and
 * docs/my-website/docs/proxy/virtual_keys.md in BerriAI/litellm): /key/generate, /key/update, /key/delete,
 * /key/info, /key/list. The full key appears once, in the /key/generate response; everything else shows the
 * hash (`token`) and `key_name` (`sk-…abcd`).
 *
 * `metadata.user_headers: true` makes a service key: its chat calls are booked on the user its request names
 * (`x-librechat-user-id`, see `users/attribution.ts`), as the chat's own key (CHAT_SERVICE_KEY) does. Only the
 * master key can set it, since these routes accept no other caller; it must be a boolean.
 */

import {
  deleteKeysRequest as deleteSchema,
  generateKeyRequest as generateSchema,
  keyInfoQuery as infoQuery,
  listKeysQuery as listQuery,
  updateKeyRequest as updateSchema,
} from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import type pg from "pg";
import { appendChange, auditActor } from "../../audit/record.js";
import { withTransaction } from "../../db/transaction.js";
import { invalidRequest } from "../../errors/gateway-error.js";
import { validateKeyGuardrails } from "../../guardrails/index.js";
import { generateKey, hashKey, keyDisplayName, toKeyHash } from "../../keys/key-material.js";
import { assertKeyWithinUser } from "../../keys/limits-policy.js";
import { type KeyRecord, keyStatus, presentKey } from "../../keys/records.js";
import {
  activeAliasHolder,
  findKey,
  insertKey,
  listKeys,
  lockAlias,
  revokeKeys,
  updateKey,
} from "../../keys/repository.js";
import { findMembership, findTeam } from "../../teams/repository.js";
import { afterDuration } from "../../time/budget-period.js";
import { findUser } from "../../users/repository.js";
import { type AdminContext, adminRoute, publishChanges } from "./context.js";
import { assertMcpServers, notFound, parse } from "./validation.js";

/** Default key lifetime when /key/generate gives no `duration`: 90 days. */
export const DEFAULT_KEY_DURATION = "90d";

/**
 * @throws GatewayError 400 naming `metadata.user_headers` when it is present and not a boolean (it decides
 *   whether a key may name the user a call is booked on).
 */
function assertUserHeadersFlag(metadata: Record<string, unknown> | null | undefined): void {
  if (metadata == null || !("user_headers" in metadata) || typeof metadata.user_headers === "boolean") return;
  throw invalidRequest(
    "metadata.user_headers must be true or false: true lets the key name the chat user each call is booked on (x-librechat-user-id).",
    "metadata.user_headers",
  );
}

/**
 * @throws GatewayError 400 naming `metadata.guardrails` when it is not a mapping of a known guardrail to
 *   enforce | monitor | off (a typo there would otherwise be ignored at call time, silently).
 */
function assertGuardrailModes(metadata: unknown, guardrailNames: readonly string[]): void {
  const problem = validateKeyGuardrails(metadata, guardrailNames);
  if (problem !== undefined) throw invalidRequest(problem, "metadata.guardrails");
}

/** Undefined stays undefined (unchanged), null stays null (cleared). */
const orNull = <T>(value: T | null | undefined) => (value === undefined ? undefined : value);

/** Refuses an alias held by another active key of the same user. Runs inside the key's transaction. */
async function assertAliasFree(
  client: pg.PoolClient,
  alias: string,
  userId: string | null,
  now: number,
  exceptToken?: string,
): Promise<void> {
  await lockAlias(client, alias, userId);
  if ((await activeAliasHolder(client, alias, userId, now, exceptToken)) !== null) {
    throw invalidRequest(
      `key_alias "${alias}" is already used by an active key${userId === null ? "" : " of this user"}; revoke that key or choose another alias.`,
      "key_alias",
    );
  }
}

/**
 * A key may be made for a team that exists (held until the transaction ends, so a concurrent /team/delete
 * waits), for a user who is a member of it, and with models among the team's (when the team restricts them).
 * @throws GatewayError 400 naming `team_id` (no such team), `user_id` (not a member) or `models`.
 */
async function assertTeamKeyAllowed(
  client: pg.PoolClient,
  teamId: string,
  userId: string | null,
  models: string[],
): Promise<void> {
  const team = await findTeam(client, teamId, "share");
  if (team === null) {
    throw invalidRequest(
      `team_id "${teamId}" does not exist; create the team with /team/new first.`,
      "team_id",
    );
  }
  if (userId !== null && (await findMembership(client, teamId, userId)) === null) {
    throw invalidRequest(
      `user_id "${userId}" is not a member of team "${teamId}"; add the user with /team/member_add first.`,
      "user_id",
    );
  }
  const outside = team.models.length === 0 ? [] : models.filter((m) => !team.models.includes(m));
  if (outside.length > 0) {
    throw invalidRequest(
      `models ${outside.join(", ")} are not among team "${teamId}"'s models (${team.models.join(", ")}).`,
      "models",
    );
  }
}

/** @throws GatewayError 400 naming `key` for a revoked or expired key (terminal states). */
export function assertChangeable(key: KeyRecord, now: number): void {
  const status = keyStatus(key, now);
  if (status !== "active") {
    throw invalidRequest(
      `This key is ${status}; ${status} keys cannot be changed (the state is terminal). Generate a new key.`,
      "key",
    );
  }
}

/** Registers the /key/* routes. */
export function registerKeyRoutes(app: FastifyInstance, context: AdminContext): void {
  const { pool, clock } = context;

  adminRoute(app, "POST", "/key/generate", async (request) => {
    const body = parse(generateSchema, request.body);
    const who = auditActor(request);
    assertUserHeadersFlag(body.metadata);
    assertGuardrailModes(body.metadata, context.guardrailNames);
    assertMcpServers(body.object_permission, context.mcpServerNames ?? []);
    const now = clock.now();
    const key = generateKey();
    const token = hashKey(key);
    const userId = body.user_id ?? null;
    const teamId = body.team_id ?? null;
    const record = await withTransaction(pool, async (client) => {
      const user = userId === null ? null : await findUser(client, userId);
      if (userId !== null && user === null) {
        throw invalidRequest(
          `user_id "${userId}" does not exist; create the user with /user/new first.`,
          "user_id",
        );
      }
      if (teamId !== null) await assertTeamKeyAllowed(client, teamId, userId, body.models ?? []);
      const limits = {
        maxBudget: body.max_budget ?? null,
        tpmLimit: body.tpm_limit ?? null,
        rpmLimit: body.rpm_limit ?? null,
      };
      const maxParallelRequests = body.max_parallel_requests ?? null;
      // A team key is bound by its team's limits, not its owner's (docs/limits.md, "Who is limited").
      if (teamId === null) assertKeyWithinUser(limits, user);
      const alias = body.key_alias ?? null;
      if (alias !== null) await assertAliasFree(client, alias, userId, now);
      const inserted = await insertKey(
        client,
        {
          token,
          keyName: keyDisplayName(key),
          keyAlias: alias,
          userId,
          teamId,
          models: body.models ?? [],
          ...limits,
          maxParallelRequests,
          budgetDuration: body.budget_duration ?? null,
          metadata: body.metadata ?? {},
          objectPermission: body.object_permission ?? null,
          expires: afterDuration(now, body.duration ?? DEFAULT_KEY_DURATION),
        },
        now,
      );
      const target = { keyAlias: alias, keyHash: token, userId, teamId };
      const after = presentKey(inserted, now);
      await appendChange(client, who, { action: "key.generate", target, before: null, after }, now);
      return inserted;
    });
    // Every instance drops the hash from its cache of unknown keys (someone may have tried it before).
    await publishChanges(context, { keys: [record] });
    request.log.info({ keyHash: token.slice(0, 12), userId, teamId }, "virtual key generated");
    return {
      key,
      ...presentKey(record, now),
      token_id: token,
      duration: body.duration ?? DEFAULT_KEY_DURATION,
    };
  });

  adminRoute(app, "POST", "/key/update", async (request) => {
    const body = parse(updateSchema, request.body);
    const who = auditActor(request);
    assertUserHeadersFlag(body.metadata);
    assertGuardrailModes(body.metadata, context.guardrailNames);
    assertMcpServers(body.object_permission, context.mcpServerNames ?? []);
    const now = clock.now();
    const token = toKeyHash(body.key);
    const updated = await withTransaction(pool, async (client) => {
      const existing = await findKey(client, token, true);
      if (existing === null) throw notFound("No key with that value or hash.", "key");
      assertChangeable(existing, now);
      if (body.user_id != null && body.user_id !== existing.userId) {
        throw invalidRequest(
          "user_id of a key cannot be changed; generate a new key for the other user.",
          "user_id",
        );
      }
      const user =
        existing.userId === null || existing.teamId !== null ? null : await findUser(client, existing.userId);
      assertKeyWithinUser(
        {
          maxBudget: body.max_budget === undefined ? existing.maxBudget : body.max_budget,
          tpmLimit: body.tpm_limit === undefined ? existing.tpmLimit : body.tpm_limit,
          rpmLimit: body.rpm_limit === undefined ? existing.rpmLimit : body.rpm_limit,
        },
        user,
      );
      if (body.key_alias != null && body.key_alias !== existing.keyAlias) {
        await assertAliasFree(client, body.key_alias, existing.userId, now, token);
      }
      const changed = await updateKey(
        client,
        token,
        {
          key_alias: orNull(body.key_alias),
          models: body.models === null ? [] : body.models,
          max_budget: orNull(body.max_budget),
          budget_duration: orNull(body.budget_duration),
          tpm_limit: orNull(body.tpm_limit),
          rpm_limit: orNull(body.rpm_limit),
          max_parallel_requests: orNull(body.max_parallel_requests),
          metadata: body.metadata ?? undefined,
          object_permission: body.object_permission,
          expires:
            body.duration == null ? undefined : new Date(afterDuration(now, body.duration)).toISOString(),
        },
        now,
      );
      if (changed !== null) {
        const target = {
          keyAlias: changed.keyAlias,
          keyHash: token,
          userId: changed.userId,
          teamId: changed.teamId,
        };
        const [before, after] = [presentKey(existing, now), presentKey(changed, now)];
        await appendChange(client, who, { action: "key.update", target, before, after }, now);
      }
      return changed;
    });
    if (updated === null) throw notFound("No key with that value or hash.", "key");
    await publishChanges(context, { keys: [updated] });
    return { key: token, ...presentKey(updated, now) };
  });

  adminRoute(app, "POST", "/key/delete", async (request) => {
    const body = parse(deleteSchema, request.body);
    const who = auditActor(request);
    const tokens = [...new Set(body.keys.map(toKeyHash))];
    const now = clock.now();
    const revoked = await withTransaction(pool, async (client) => {
      const found = new Map<string, KeyRecord>();
      for (const token of tokens) {
        const key = await findKey(client, token, true);
        if (key !== null) found.set(token, key);
      }
      const revokedNow = await revokeKeys(client, tokens, now);
      for (const key of revokedNow) {
        const was = found.get(key.token);
        if (was === undefined || was.revokedAt !== null) continue; // revoked before: nothing changed
        const target = { keyAlias: key.keyAlias, keyHash: key.token, userId: key.userId, teamId: key.teamId };
        const [before, after] = [presentKey(was, now), presentKey(key, now)];
        await appendChange(client, who, { action: "key.delete", target, before, after }, now);
      }
      return revokedNow;
    });
    if (revoked.length === 0) throw notFound("None of the given keys exists.", "keys");
    await publishChanges(context, { keys: revoked });
    const hashes = revoked.map((k) => k.token);
    request.log.info({ keyHashes: hashes.map((t) => t.slice(0, 12)) }, "virtual keys revoked");
    return { deleted_keys: hashes };
  });

  adminRoute(app, "GET", "/key/info", async (request) => {
    const query = parse(infoQuery, request.query);
    const token = toKeyHash(query.key);
    const key = await findKey(pool, token);
    if (key === null) throw notFound("No key with that value or hash.", "key");
    return { key: token, info: presentKey(key, clock.now()) };
  });

  adminRoute(app, "GET", "/key/list", async (request) => {
    const query = parse(listQuery, request.query);
    const { keys, total } = await listKeys(
      pool,
      {
        userId: query.user_id,
        teamId: query.team_id,
        keyAlias: query.key_alias,
        keyHash: query.key_hash === undefined ? undefined : toKeyHash(query.key_hash),
        includeRevoked: query.include_revoked,
      },
      query.page,
      query.size,
    );
    const now = clock.now();
    return {
      keys: query.return_full_object ? keys.map((k) => presentKey(k, now)) : keys.map((k) => k.token),
      total_count: total,
      current_page: query.page,
      total_pages: Math.ceil(total / query.size),
    };
  });
}
