/**
 * What every admin route shares: the injected store handles ({@link AdminContext}), the master-key check, the
 * mapping of a database outage to 503, and publishing changes to every instance.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type pg from "pg";
import { requireMaster } from "../../auth/require-master.js";
import type { InvalidationBus, InvalidationMessage } from "../../cache/types.js";
import type { GatewayEnv } from "../../config/env.js";
import { isDatabaseUnavailable } from "../../db/errors.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { KeyRecord } from "../../keys/records.js";
import type { MembershipRecord, TeamRecord } from "../../teams/records.js";
import type { Clock } from "../../time/clock.js";
import type { UserRecord } from "../../users/records.js";

/** What the admin routes need, injected by the gateway's assembly (`gateway.ts`). */
export interface AdminContext {
  /** The store's pool; the repositories (`keys/repository.ts`, `users/repository.ts`, `spend/queries.ts`) run on it. */
  pool: pg.Pool;
  clock: Clock;
  /** Every change to a key or user is published here so all instances drop their cached copy. */
  bus: InvalidationBus;
  /** Limits of users created by /user/new without explicit values (DEFAULT_USER_BUDGET, …). */
  userDefaults: GatewayEnv["userDefaults"];
  /** Guardrail names a key's `metadata.guardrails` may set a mode for (e.g. pii, prompt_injection). */
  guardrailNames: readonly string[];
  /**
   * The MCP servers the config declares (`mcp_servers:` names): an `object_permission` may grant only these
   * (default none).
   */
  mcpServerNames?: readonly string[];
}

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** 503 for an admin call made while Postgres cannot be reached. */
export function databaseUnavailable(cause: unknown): GatewayError {
  return new GatewayError(
    503,
    "The admin API cannot reach its database (Postgres) now; nothing was changed. Try again shortly.",
    { type: "service_unavailable_error", code: "database_unavailable", cause },
  );
}

/**
 * Registers an admin route whose handler first checks for the master key (401 none, 403 a virtual key). A
 * database outage during the handler is answered 503 (`database_unavailable`), never 500.
 */
export function adminRoute(
  app: FastifyInstance,
  method: "GET" | "POST",
  url: string,
  handler: Handler,
): void {
  app.route({
    method,
    url,
    handler: async (request, reply) => {
      requireMaster(request);
      try {
        return await handler(request, reply);
      } catch (error) {
        if (!(error instanceof GatewayError) && isDatabaseUnavailable(error))
          throw databaseUnavailable(error);
        throw error;
      }
    },
  });
}

/**
 * Publishes the new state of changed keys, a changed user, team or memberships to every instance (this one
 * included, at once), so that each can apply it to its cache without reading the database. Never throws (the
 * bus never does).
 */
export async function publishChanges(
  context: AdminContext,
  change: {
    keys?: KeyRecord[];
    user?: UserRecord;
    team?: TeamRecord;
    members?: { member: MembershipRecord; deleted: boolean }[];
  },
): Promise<void> {
  const messages: InvalidationMessage[] = (change.keys ?? []).map((key) => ({ kind: "key", key }));
  if (change.user !== undefined) messages.push({ kind: "user", user: change.user });
  if (change.team !== undefined) messages.push({ kind: "team", team: change.team });
  for (const { member, deleted } of change.members ?? []) messages.push({ kind: "member", member, deleted });
  await Promise.all(messages.map((message) => context.bus.publish(message)));
}
