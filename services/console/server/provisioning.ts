/**
 * Just-in-time provisioning: a chat user's first console visit creates their gateway user through
 * `/user/new` with the organisation defaults (DEFAULT_USER_BUDGET USD per DEFAULT_BUDGET_DURATION,
 * DEFAULT_TPM_LIMIT, DEFAULT_RPM_LIMIT). `/user/new` is idempotent (an existing user is returned unchanged),
 * so a retry after a failure, or a second console instance, is harmless.
 */
import type { AdminApiClient, UserRole } from "@platform/admin-api";
import type { ConsoleConfig } from "./config.js";
import type { ConsoleSession, ConsoleSessions } from "./session/console-sessions.js";

/** The gateway role of a chat role: `ADMIN` is `proxy_admin`, every other role `internal_user`. */
export const gatewayRole = (chatRole: string): UserRole =>
  chatRole === "ADMIN" ? "proxy_admin" : "internal_user";

/**
 * Makes sure the session's chat user exists in the gateway (once per session).
 * @throws AdminApiError when the gateway is unreachable or refuses the master key; the session stays
 *   unprovisioned and the next request tries again.
 */
export async function ensureProvisioned(
  session: ConsoleSession,
  gateway: AdminApiClient,
  defaults: ConsoleConfig["userDefaults"],
  sessions: ConsoleSessions,
): Promise<void> {
  const principal = session.principal;
  if (session.provisioned || principal.kind !== "chat") return;
  await gateway.newUser({
    user_id: principal.userId,
    user_email: principal.email,
    user_role: gatewayRole(principal.role),
    max_budget: defaults.maxBudget,
    budget_duration: defaults.budgetDuration,
    tpm_limit: defaults.tpmLimit,
    rpm_limit: defaults.rpmLimit,
  });
  session.provisioned = true;
  await sessions.save(session);
}
