/**
 * Checking a request against one of the schemas, with the refusal described the way the gateway words it
 * (`Invalid <field path>: <reason>`), so gateway and console refuse bad input alike.
 */
import type { z } from "zod";

/** The outcome of {@link checkRequest}: the parsed value, or a message and the first invalid field's path. */
export type RequestCheck<T> = { ok: true; value: T } | { ok: false; message: string; param: string | null };

/** Parses `data` (undefined/null as `{}`) with `schema`; never throws. */
export function checkRequest<T>(schema: z.ZodType<T>, data: unknown): RequestCheck<T> {
  const result = schema.safeParse(data ?? {});
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0];
  const path = issue === undefined ? "" : issue.path.map(String).join(".");
  const reason = issue?.message ?? "invalid request";
  return {
    ok: false,
    message: path === "" ? `Invalid request body: ${reason}` : `Invalid ${path}: ${reason}`,
    param: path || null,
  };
}
