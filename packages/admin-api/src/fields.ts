/**
 * Field schemas shared by the admin API's requests: LiteLLM's names and units (USD for money, per-minute
 * counts for limits, LiteLLM durations such as `30d`). They accept exactly what the gateway's admin routes
 * accept (services/gateway/src/routes/admin/validation.ts).
 */
import { z } from "zod";

/** LiteLLM duration syntax: `30s`, `30m`, `30h`, `30d`, `2w`, `1mo` (calendar month, UTC). */
export const DURATION_PATTERN = /^([1-9][0-9]{0,5})(s|m|h|d|w|mo)$/;

/** True when `text` is a LiteLLM duration ({@link DURATION_PATTERN}, surrounding blanks ignored). */
export const isDuration = (text: string): boolean => DURATION_PATTERN.test(text.trim());

/** USD amount, finite and ≥ 0. */
export const money = z.number().finite().nonnegative();
/** Per-minute limit (requests or tokens), a non-negative integer. */
export const perMinute = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
/** Calls in flight at once (`max_parallel_requests`), a non-negative integer. */
export const parallelCalls = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
/** LiteLLM duration (`30s`, `30m`, `30h`, `30d`, `2w`, `1mo`). */
export const duration = z
  .string()
  .refine(isDuration, { message: "expected a duration like 30s, 30m, 30h, 30d, 2w or 1mo" });

/**
 * The budget and rate-limit fields of a key or user request; each may be omitted (default or unchanged) or
 * null (unlimited / cleared).
 */
export const limitFields = {
  max_budget: money.nullish(),
  budget_duration: duration.nullish(),
  tpm_limit: perMinute.nullish(),
  rpm_limit: perMinute.nullish(),
  /** LiteLLM's `max_parallel_requests`: calls of the key (or user) in flight at once, on every instance. */
  max_parallel_requests: parallelCalls.nullish(),
};
/** A user id, key alias or key/hash: 1–256 characters after trimming. */
export const identifier = z.string().trim().min(1).max(256);
/**
 * LiteLLM's `object_permission` of a key, the MCP part: the MCP servers it may reach (their names under
 * `mcp_servers:` in the gateway's config) and, per server, the only tools it may use there.
 */
export const objectPermission = z.strictObject({
  mcp_servers: z.array(z.string().min(1).max(64)).max(1000).optional(),
  mcp_tool_permissions: z
    .record(z.string().min(1).max(64), z.array(z.string().min(1).max(128)).max(1000))
    .optional(),
});
export type ObjectPermission = z.infer<typeof objectPermission>;

/** Free-form metadata object. */
export const metadata = z.record(z.string(), z.unknown());
/** Model aliases (`model_name` of the config); empty = every model. */
export const modelList = z.array(z.string().trim().min(1).max(256)).max(1000);

/** LiteLLM's user roles (`LitellmUserRoles` in litellm/proxy/_types.py). */
export const userRole = z.enum([
  "proxy_admin",
  "proxy_admin_viewer",
  "internal_user",
  "internal_user_viewer",
]);
export type UserRole = z.infer<typeof userRole>;

/** `?page=` style positive integers from a query string, with a default. */
export const pageNumber = (fallback: number) => z.coerce.number().int().min(1).default(fallback);
/** A page size from a query string: 1..`max`, default `fallback`. */
export const pageSize = (fallback: number, max: number) =>
  z.coerce.number().int().min(1).max(max).default(fallback);
/** `true`/`false` from a query string (absent = false). */
export const queryBoolean = z
  .enum(["true", "false"])
  .optional()
  .transform((v) => v === "true");
/** A stored key's hash: SHA-256 hex, 64 lowercase hex characters (LiteLLM's `token`). */
export const keyHash = z.string().regex(/^[0-9a-f]{64}$/, { message: "expected a key hash (64 hex)" });
/** ISO 8601 time as the gateway writes it (`Date#toISOString`), or null. */
export const isoTime = z.string().nullable();
