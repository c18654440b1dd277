/**
 * What the Admin view reads about the whole platform: every user, every key with its owner, and the platform's
 * spend over a period (`usage-period.ts`) from the gateway's `/spend/usage` without a user or key (every request: keys
 * of users, keys of no user, the chat's service key and master-key calls).
 */
import type { AdminApiClient, KeyRecord, UserRecord } from "@platform/admin-api";
import type { UsagePeriod } from "./usage-period.js";

/** Most users read (pages of 100). */
const MAX_USERS = 2000;
/** Most keys read (pages of 100). */
const MAX_KEYS = 5000;

/** Every gateway user, page by page, at most {@link MAX_USERS}. */
export async function allUsers(gateway: AdminApiClient): Promise<UserRecord[]> {
  const users: UserRecord[] = [];
  for (let page = 1; users.length < MAX_USERS; page++) {
    const result = await gateway.listUsers({ page, page_size: 100 });
    users.push(...result.users);
    if (page >= result.total_pages) break;
  }
  return users;
}

/**
 * Every key (of a user or of no user; revoked and expired ones too), or every key of `userId`, page by page,
 * at most {@link MAX_KEYS}.
 */
export async function allKeys(gateway: AdminApiClient, userId?: string): Promise<KeyRecord[]> {
  const keys: KeyRecord[] = [];
  for (let page = 1; keys.length < MAX_KEYS; page++) {
    const result = await gateway.listKeys({
      page,
      size: 100,
      user_id: userId,
      return_full_object: true,
      include_revoked: true,
    });
    keys.push(...result.keys.filter((k): k is KeyRecord => typeof k !== "string"));
    if (page >= result.total_pages) break;
  }
  return keys;
}

/** Platform spend over `period` (totals, per day, per model, per key, failed calls per reason) and the number of users. */
export async function platformSpend(gateway: AdminApiClient, period: UsagePeriod) {
  const [usage, users] = await Promise.all([
    gateway.usage({ days: period.days, end_date: period.end_date }),
    gateway.listUsers({ page_size: 1 }),
  ]);
  return {
    days: period.days,
    start_date: usage.start_date,
    end_date: usage.end_date,
    totals: usage.totals,
    daily: usage.daily,
    by_model: usage.by_model,
    by_key: usage.by_key,
    by_reason: usage.by_reason,
    users: users.total,
  };
}
