/**
 * A key's limits can only be tighter than its user's.
 *
 * Compared: `max_budget`, `tpm_limit`, `rpm_limit`, each when both the key and the user set one (a key
 * without its own value is bounded by the user's, because both are enforced on every call). Budget periods
 * are not compared: whatever the key's period, its spend also counts against the user's budget in the user's
 * period, so a different key period can never let the key spend more than the user may.
 */
import { invalidRequest } from "../errors/gateway-error.js";
import type { LimitFields } from "../users/records.js";

type Comparable = Pick<LimitFields, "maxBudget" | "tpmLimit" | "rpmLimit">;

const COMPARED = [
  ["max_budget", "maxBudget"],
  ["tpm_limit", "tpmLimit"],
  ["rpm_limit", "rpmLimit"],
] as const;

/**
 * @throws GatewayError 400 naming the first limit where the key is looser than the user, with both values.
 */
export function assertKeyWithinUser(key: Comparable, user: Comparable | null): void {
  if (user === null) return;
  for (const [field, property] of COMPARED) {
    const keyValue = key[property];
    const userValue = user[property];
    if (keyValue !== null && userValue !== null && keyValue > userValue) {
      throw invalidRequest(
        `${field} ${keyValue} is looser than the user's ${field} ${userValue}: a key's limits can only be tighter than its user's.`,
        field,
      );
    }
  }
}
