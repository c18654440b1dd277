/**
 * zod validation of admin requests: a refused request is a 400 `invalid_request_error` naming the field.
 */
import { z } from "zod";
import { GatewayError, invalidRequest } from "../../errors/gateway-error.js";
import { isDuration } from "../../users/budget-period.js";

/**
 * The path (`metadata.note`, `models.2`) of the first string, or object key, in `data` that holds a NUL
 * character (U+0000), or undefined. Postgres stores neither in `text` nor in `jsonb`.
 */
export function nulCharacterAt(data: unknown, path: string[] = []): string[] | undefined {
  if (typeof data === "string") return data.includes("\u0000") ? path : undefined;
  if (Array.isArray(data)) {
    for (let i = 0; i < data.length; i += 1) {
      const found = nulCharacterAt(data[i], [...path, String(i)]);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof data === "object" && data !== null) {
    for (const [key, value] of Object.entries(data)) {
      if (key.includes("\u0000")) return [...path, key.replaceAll("\u0000", "\\u0000")];
      const found = nulCharacterAt(value, [...path, key]);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * Parses `data` (a body or a query string) with `schema`.
 * @throws GatewayError 400 whose `param` is the first invalid field's path (`max_budget`, `keys.0`); a NUL
 *   character anywhere (value or key) is refused before the schema runs, naming its path.
 */
export function parse<T>(schema: z.ZodType<T>, data: unknown): T {
  const nul = nulCharacterAt(data);
  if (nul !== undefined) {
    const path = nul.join(".");
    throw invalidRequest(
      path === ""
        ? "Invalid request: NUL characters (\\u0000) are not accepted."
        : `Invalid ${path}: NUL characters (\\u0000) are not accepted.`,
      path || null,
    );
  }
  const result = schema.safeParse(data ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue === undefined ? "" : issue.path.map(String).join(".");
  const message = issue?.message ?? "invalid request";
  throw invalidRequest(
    path === "" ? `Invalid request body: ${message}` : `Invalid ${path}: ${message}`,
    path || null,
  );
}

/** USD amount. */
export const money = z.number().finite().nonnegative();
/** Per-minute limit. */
export const perMinute = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
/** LiteLLM duration (`30s`, `30m`, `30h`, `30d`, `2w`, `1mo`). */
export const duration = z
  .string()
  .refine(isDuration, { message: "expected a duration like 30s, 30m, 30h, 30d, 2w or 1mo" });
/**
 * The budget and rate-limit fields of a key or user request, LiteLLM's names; each may be omitted or null (what
 * that means, default, unchanged or unlimited, is the route's to say).
 */
export const limitFields = {
  max_budget: money.nullish(),
  budget_duration: duration.nullish(),
  tpm_limit: perMinute.nullish(),
  rpm_limit: perMinute.nullish(),
};
export const identifier = z.string().trim().min(1).max(256);
export const metadata = z.record(z.string(), z.unknown());
export const modelList = z.array(z.string().trim().min(1).max(256)).max(1000);

/** LiteLLM's user roles (`LitellmUserRoles`). */
export const userRole = z.enum([
  "proxy_admin",
  "proxy_admin_viewer",
  "internal_user",
  "internal_user_viewer",
]);

/** `?page=` style positive integers from a query string. */
export const pageNumber = (fallback: number) => z.coerce.number().int().min(1).default(fallback);
export const pageSize = (fallback: number, max: number) =>
  z.coerce.number().int().min(1).max(max).default(fallback);
/** `true`/`false` from a query string. */
export const queryBoolean = z
  .enum(["true", "false"])
  .optional()
  .transform((v) => v === "true");

/** 404 `not_found_error` about one request field. */
export function notFound(message: string, param: string): GatewayError {
  return new GatewayError(404, message, { type: "not_found_error", param });
}
