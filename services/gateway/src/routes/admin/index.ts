/**
 * The admin API (master key only): LiteLLM's key, user and team management shapes plus the usage aggregates the
 * key console needs. A fastify plugin; register it after the auth plugin. The gateway's assembly injects the
 * store handles ({@link AdminContext}); without a database it registers {@link adminNeedsDatabase} instead.
 */
import type { FastifyPluginAsync } from "fastify";
import { GatewayError } from "../../errors/gateway-error.js";
import { registerAuditRoutes } from "./audit.js";
import { type AdminContext, adminRoute } from "./context.js";
import { registerKeyActionRoutes } from "./key-actions.js";
import { registerKeyRoutes } from "./keys.js";
import { registerSpendRoutes } from "./spend.js";
import { registerTeamMemberRoutes } from "./team-members.js";
import { registerTeamRoutes } from "./teams.js";
import { registerUserRoutes } from "./users.js";

export type { AdminContext } from "./context.js";

/** Every admin route, method and path. */
export const ADMIN_ROUTES = [
  ["POST", "/key/generate"],
  ["POST", "/key/update"],
  ["POST", "/key/delete"],
  ["GET", "/key/info"],
  ["GET", "/key/list"],
  ["POST", "/key/block"],
  ["POST", "/key/unblock"],
  ["POST", "/key/regenerate"],
  ["POST", "/user/new"],
  ["GET", "/user/info"],
  ["POST", "/user/update"],
  ["GET", "/user/list"],
  ["POST", "/user/delete"],
  ["POST", "/team/new"],
  ["POST", "/team/update"],
  ["POST", "/team/delete"],
  ["GET", "/team/info"],
  ["GET", "/team/list"],
  ["POST", "/team/block"],
  ["POST", "/team/unblock"],
  ["POST", "/team/member_add"],
  ["POST", "/team/member_update"],
  ["POST", "/team/member_delete"],
  ["GET", "/spend/logs"],
  ["GET", "/spend/usage"],
  ["GET", "/audit/logs"],
  ["POST", "/audit/event"],
] as const;

/**
 * Builds the admin plugin: the {@link ADMIN_ROUTES}. Every handler refuses callers without the master key (401)
 * or with a virtual key (403); malformed input is 400 naming the field; a database outage is 503.
 */
export function createAdminRoutes(context: AdminContext): FastifyPluginAsync {
  return async (app) => {
    registerKeyRoutes(app, context);
    registerKeyActionRoutes(app, context);
    registerUserRoutes(app, context);
    registerTeamRoutes(app, context);
    registerTeamMemberRoutes(app, context);
    registerSpendRoutes(app, context);
    registerAuditRoutes(app, context);
  };
}

/**
 * The admin plugin of a gateway without DATABASE_URL: the same {@link ADMIN_ROUTES} (master key still
 * required), each answering 501 `database_not_configured` saying the admin API needs DATABASE_URL.
 */
export const adminNeedsDatabase: FastifyPluginAsync = async (app) => {
  for (const [method, url] of ADMIN_ROUTES) {
    adminRoute(app, method, url, async () => {
      throw new GatewayError(
        501,
        `${method} ${url} needs DATABASE_URL: the admin API keeps keys, users and spend in Postgres, and this gateway runs without one (only the master key works).`,
        { type: "server_error", code: "database_not_configured" },
      );
    });
  }
};
