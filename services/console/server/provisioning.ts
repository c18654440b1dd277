/**
 * Just-in-time provisioning: a chat user's first console visit creates their gateway user through
 * `/user/new` with the organisation defaults (DEFAULT_USER_BUDGET USD per DEFAULT_BUDGET_DURATION,
 * DEFAULT_TPM_LIMIT, DEFAULT_RPM_LIMIT) and, with DEFAULT_TEAM_ID set, makes a user the gateway did not know
 * yet a member (role `user`) of that team through `/team/member_add`. `/user/new` is idempotent (an existing
 * user is returned unchanged), so a retry after a failure, or a second console instance, is harmless; a user
 * who already existed (e.g. one a team admin removed from the default team) is never added again.
 */
import { type AdminApiClient, AdminApiError, type UserRole } from "@platform/admin-api";
import type { FastifyBaseLogger } from "fastify";
import type { ConsoleConfig } from "./config.js";
import type { ConsoleSession, ConsoleSessions } from "./session/console-sessions.js";

/** The gateway role of a chat role: `ADMIN` is `proxy_admin`, every other role `internal_user`. */
export const gatewayRole = (chatRole: string): UserRole =>
  chatRole === "ADMIN" ? "proxy_admin" : "internal_user";

/** True when the gateway has user `userId` (`/user/info` answers); false on its 404. */
async function knownUser(gateway: AdminApiClient, userId: string): Promise<boolean> {
  try {
    await gateway.userInfo(userId);
    return true;
  } catch (error) {
    if (error instanceof AdminApiError && error.status === 404) return false;
    throw error;
  }
}

/**
 * Makes sure the session's chat user exists in the gateway (once per session); a new user joins the default
 * team. A default team the gateway refuses (deleted, unknown) is logged on `log` and does not stop the sign-in.
 * @throws AdminApiError when the gateway is unreachable or refuses the master key; the session stays
 *   unprovisioned and the next request tries again.
 */
export async function ensureProvisioned(
  session: ConsoleSession,
  gateway: AdminApiClient,
  defaults: ConsoleConfig["userDefaults"],
  sessions: ConsoleSessions,
  log?: FastifyBaseLogger,
): Promise<void> {
  const principal = session.principal;
  if (session.provisioned || principal.kind !== "chat") return;
  const isNew = defaults.teamId !== null && !(await knownUser(gateway, principal.userId));
  await gateway.newUser({
    user_id: principal.userId,
    user_email: principal.email,
    user_role: gatewayRole(principal.role),
    max_budget: defaults.maxBudget,
    budget_duration: defaults.budgetDuration,
    tpm_limit: defaults.tpmLimit,
    rpm_limit: defaults.rpmLimit,
  });
  if (isNew && defaults.teamId !== null) {
    await gateway
      .addTeamMember({ team_id: defaults.teamId, member: { role: "user", user_id: principal.userId } })
      .catch((error: unknown) => {
        if (!(error instanceof AdminApiError && error.kind === "http" && error.status < 500)) throw error;
        log?.warn(
          { teamId: defaults.teamId, status: error.status },
          `DEFAULT_TEAM_ID not joined: ${error.message}`,
        );
      });
  }
  session.provisioned = true;
  await sessions.save(session);
}
