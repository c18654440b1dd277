/**
 * Users as stored in the `users` table, and the limit fields users and keys share (their columns, how a row's
 * are read, what a new row and an update write). Times are epoch ms, money USD, limits per minute.
 */
import type { LimitSubject } from "../limits/types.js";
import { afterDuration, currentPeriod } from "../time/budget-period.js";

/** Budget and rate limits of a key or a user (null = unlimited / lifetime). */
export interface LimitFields {
  /** USD per period. */
  maxBudget: number | null;
  /** LiteLLM duration (`30d`), or null for a lifetime budget. */
  budgetDuration: string | null;
  /** End of the stored period, epoch ms. */
  budgetResetAt: number | null;
  /** USD spent in the stored period. */
  spend: number;
  /** Tokens per minute. */
  tpmLimit: number | null;
  /** Requests per minute. */
  rpmLimit: number | null;
  /** Calls in flight at once, on all instances together (LiteLLM's `max_parallel_requests`). */
  maxParallelRequests: number | null;
}

/** The columns of the {@link LimitFields} in both `users` and `keys`, as {@link limitsFromRow} reads them. */
export const LIMIT_COLUMNS = [
  "max_budget",
  "budget_duration",
  "budget_reset_at",
  "spend",
  "tpm_limit",
  "rpm_limit",
  "max_parallel_requests",
] as const;

/** `$1, $2, …, $n`: the first `n` query parameters (an INSERT's VALUES). */
export const placeholders = (n: number): string =>
  Array.from({ length: n }, (_, i) => `$${i + 1}`).join(", ");

/** The limits of a new user or key (validated, and defaulted by the caller). */
export type NewLimits = Pick<LimitFields, "maxBudget" | "budgetDuration" | "tpmLimit" | "rpmLimit"> &
  Partial<Pick<LimitFields, "maxParallelRequests">>;

/**
 * Values for a new row's {@link LIMIT_COLUMNS}, in that order: the first budget period starts at `now` (epoch
 * ms) and nothing is spent yet.
 */
export function newLimitValues(limits: NewLimits, now: number): unknown[] {
  const { budgetDuration } = limits;
  return [
    limits.maxBudget,
    budgetDuration,
    budgetDuration === null ? null : new Date(afterDuration(now, budgetDuration)).toISOString(),
    0,
    limits.tpmLimit,
    limits.rpmLimit,
    limits.maxParallelRequests ?? null,
  ];
}

/** The limit columns an update of a user or key may set, by wire name (undefined = unchanged, null = cleared). */
export interface LimitPatch {
  max_budget?: number | null;
  budget_duration?: string | null;
  tpm_limit?: number | null;
  rpm_limit?: number | null;
  max_parallel_requests?: number | null;
}

/** The keys of {@link LimitPatch}; a new `budget_duration` also moves `budget_reset_at` (see `db/patch.ts`). */
export const LIMIT_PATCH_COLUMNS = [
  "max_budget",
  "budget_duration",
  "tpm_limit",
  "rpm_limit",
  "max_parallel_requests",
] as const;

export interface UserRecord extends LimitFields {
  userId: string;
  userEmail: string | null;
  /** LiteLLM role: proxy_admin, proxy_admin_viewer, internal_user, internal_user_viewer. */
  userRole: string;
  metadata: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

/** The `users` columns, in the order {@link userFromRow} reads them (prefix for joins: `u.`). */
export const USER_COLUMNS = [
  "user_id",
  "user_email",
  "user_role",
  ...LIMIT_COLUMNS,
  "metadata",
  "created_at",
  "updated_at",
] as const;

/** A row as node-postgres returns it (numeric and bigint parsed to numbers by the pool). */
export type Row = Record<string, unknown>;

export const epochOrNull = (value: unknown): number | null =>
  value instanceof Date ? value.getTime() : null;
export const numberOrNull = (value: unknown): number | null => (typeof value === "number" ? value : null);
export const stringOrNull = (value: unknown): string | null => (typeof value === "string" ? value : null);

/** The limit fields of a `users` or `keys` row. */
export function limitsFromRow(row: Row, prefix = ""): LimitFields {
  return {
    maxBudget: numberOrNull(row[`${prefix}max_budget`]),
    budgetDuration: stringOrNull(row[`${prefix}budget_duration`]),
    budgetResetAt: epochOrNull(row[`${prefix}budget_reset_at`]),
    spend: numberOrNull(row[`${prefix}spend`]) ?? 0,
    tpmLimit: numberOrNull(row[`${prefix}tpm_limit`]),
    rpmLimit: numberOrNull(row[`${prefix}rpm_limit`]),
    maxParallelRequests: numberOrNull(row[`${prefix}max_parallel_requests`]),
  };
}

/** Maps a `users` row (columns optionally prefixed, e.g. `u_` in a join). */
export function userFromRow(row: Row, prefix = ""): UserRecord {
  return {
    ...limitsFromRow(row, prefix),
    userId: String(row[`${prefix}user_id`]),
    userEmail: stringOrNull(row[`${prefix}user_email`]),
    userRole: String(row[`${prefix}user_role`]),
    metadata: (row[`${prefix}metadata`] as Record<string, unknown> | null) ?? {},
    createdAt: epochOrNull(row[`${prefix}created_at`]) ?? 0,
    updatedAt: epochOrNull(row[`${prefix}updated_at`]) ?? 0,
  };
}

/**
 * The limit subject of a key or user as of `now` (epoch ms): a period whose `budgetResetAt` has passed is
 * presented rolled over (spend 0, the next reset), before the database row is updated. `alias` (a key's
 * alias) names the subject in refusal messages.
 */
export function limitSubject(
  scope: LimitSubject["scope"],
  id: string,
  limits: LimitFields,
  now: number,
  alias: string | null = null,
): LimitSubject {
  const period = currentPeriod(limits, now);
  return {
    scope,
    id,
    alias,
    rpmLimit: limits.rpmLimit,
    tpmLimit: limits.tpmLimit,
    maxParallelRequests: limits.maxParallelRequests,
    maxBudget: limits.maxBudget,
    budgetDuration: limits.budgetDuration,
    budgetResetAt: period.budgetResetAt,
    spend: period.spend,
  };
}

const iso = (epochMs: number | null) => (epochMs === null ? null : new Date(epochMs).toISOString());

/** The limit fields on the wire (LiteLLM names), rolled over to `now`. */
export function presentLimits(limits: LimitFields, now: number) {
  const period = currentPeriod(limits, now);
  return {
    spend: period.spend,
    max_budget: limits.maxBudget,
    budget_duration: limits.budgetDuration,
    budget_reset_at: iso(period.budgetResetAt),
    tpm_limit: limits.tpmLimit,
    rpm_limit: limits.rpmLimit,
    max_parallel_requests: limits.maxParallelRequests,
  };
}

/** A user on the wire (LiteLLM's `LiteLLM_UserTable` fields we keep). */
export function presentUser(user: UserRecord, now: number) {
  return {
    user_id: user.userId,
    user_email: user.userEmail,
    user_role: user.userRole,
    ...presentLimits(user, now),
    metadata: user.metadata,
    created_at: iso(user.createdAt),
    updated_at: iso(user.updatedAt),
  };
}

export { iso as toIso };
