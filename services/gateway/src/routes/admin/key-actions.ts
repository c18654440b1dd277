/**
 * LiteLLM's key verbs beside create/update/delete (litellm/proxy/management_endpoints/key_management_endpoints.py
 * in BerriAI/litellm): /key/block and /key/unblock (`{key}`: refused with 401 `key_blocked` until unblocked;
 * answers the key), and /key/regenerate (`{key}`: a new secret for the same record, keeping its limits, spend,
 * alias, owner and team; answers like /key/generate, the new `key` shown once). The old secret is refused on
 * every instance as soon as the change message arrives: the old hash is published revoked and no longer exists
 * in the database. (LiteLLM also accepts `POST /key/{key}/regenerate`; a key in a URL path ends up in access
 * logs, so only the body form is served.)
 */
import { keyActionRequest } from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import { appendChange, auditActor } from "../../audit/record.js";
import { withTransaction } from "../../db/transaction.js";
import { generateKey, hashKey, keyDisplayName, toKeyHash } from "../../keys/key-material.js";
import { presentKey } from "../../keys/records.js";
import { findKey, rekey, updateKey } from "../../keys/repository.js";
import { type AdminContext, adminRoute, publishChanges } from "./context.js";
import { assertChangeable } from "./keys.js";
import { notFound, parse } from "./validation.js";

const noSuchKey = () => notFound("No key with that value or hash.", "key");

/** Registers /key/block, /key/unblock and /key/regenerate. */
export function registerKeyActionRoutes(app: FastifyInstance, context: AdminContext): void {
  const { pool, clock } = context;

  for (const [url, blocked] of [
    ["/key/block", true],
    ["/key/unblock", false],
  ] as const) {
    adminRoute(app, "POST", url, async (request) => {
      const token = toKeyHash(parse(keyActionRequest, request.body).key);
      const who = auditActor(request);
      const now = clock.now();
      const changed = await withTransaction(pool, async (client) => {
        const existing = await findKey(client, token, true);
        if (existing === null) throw noSuchKey();
        assertChangeable(existing, now);
        const after = await updateKey(client, token, { blocked }, now);
        if (after === null) throw noSuchKey();
        const target = {
          keyAlias: after.keyAlias,
          keyHash: token,
          userId: after.userId,
          teamId: after.teamId,
        };
        const change = { before: { blocked: existing.blocked }, after: { blocked: after.blocked } };
        await appendChange(
          client,
          who,
          { action: blocked ? "key.block" : "key.unblock", target, ...change },
          now,
        );
        return after;
      });
      await publishChanges(context, { keys: [changed] });
      return { key: token, ...presentKey(changed, now) };
    });
  }

  adminRoute(app, "POST", "/key/regenerate", async (request) => {
    const token = toKeyHash(parse(keyActionRequest, request.body).key);
    const who = auditActor(request);
    const now = clock.now();
    const key = generateKey();
    const newToken = hashKey(key);
    const { before, after } = await withTransaction(pool, async (client) => {
      const existing = await findKey(client, token, true);
      if (existing === null) throw noSuchKey();
      assertChangeable(existing, now);
      const changed = await rekey(client, token, newToken, keyDisplayName(key), now);
      if (changed === null) throw noSuchKey();
      const target = {
        keyAlias: changed.keyAlias,
        keyHash: newToken,
        userId: changed.userId,
        teamId: changed.teamId,
      };
      const change = { before: { key_name: existing.keyName }, after: { key_name: changed.keyName } };
      await appendChange(client, who, { action: "key.regenerate", target, ...change }, now);
      return { before: existing, after: changed };
    });
    // Every instance refuses the old secret (its hash, published revoked) and learns the new one.
    await publishChanges(context, { keys: [{ ...before, revokedAt: now, updatedAt: now }, after] });
    request.log.info(
      { keyHash: newToken.slice(0, 12), previous: token.slice(0, 12) },
      "virtual key regenerated",
    );
    return { key, ...presentKey(after, now), token_id: newToken };
  });
}
