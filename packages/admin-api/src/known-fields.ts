/**
 * Admin requests take only the fields the gateway acts on. A field it does not know is refused rather than
 * dropped: a misspelt `max_budjet` must not make a key without a budget. LiteLLM's own request models
 * (litellm/proxy/_types.py `GenerateRequestBase`, `GenerateKeyRequest`, `NewUserRequest`, `NewTeamRequest`)
 * have more fields than the gateway enforces; those that would limit money or access (`model_max_budget`,
 * `model_rpm_limit`, `guardrails`, …) are taken only when they say nothing (null, `{}`, `[]`, `false`, `0`, `""`),
 * which is what LiteLLM's clients send by default, and refused otherwise; those that only inform (`tags`,
 * `send_invite_email`) are taken and ignored.
 */
import { closest, distance } from "fastest-levenshtein";
import { z } from "zod";

/** LiteLLM request fields that only inform: taken and ignored, whatever they hold. */
export const INFORMATIONAL_FIELDS: ReadonlySet<string> = new Set(["tags", "send_invite_email"]);

/**
 * LiteLLM request fields whose limit, grant or setting the gateway does not enforce: taken only when empty,
 * else refused (400 naming the field), so that nobody believes a limit holds that does not.
 */
export const UNENFORCED_FIELDS: ReadonlySet<string> = new Set([
  "model_max_budget",
  "model_rpm_limit",
  "model_tpm_limit",
  "budget_limits",
  "budget_fallbacks",
  "soft_budget",
  "spend",
  "allowed_cache_controls",
  "allowed_routes",
  "allowed_passthrough_routes",
  "enforced_params",
  "mcp_rpm_limit",
  "tag_rpm_limit",
  "guardrails",
  "policies",
  "prompts",
  "aliases",
  "config",
  "permissions",
  "organization_id",
  "agent_id",
  "auto_rotate",
  "rotation_interval",
  "teams",
]);

/** null/undefined, `false`, `0`, `""`, `[]` or `{}`: a field that says nothing. */
function saysNothing(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === "object" && Object.keys(value).length === 0;
}

/**
 * The refusal of `field`, not in `known`, or undefined when it may pass (an informational field, or an
 * unenforced one that says nothing). A name within two edits of a known field is named as the field meant.
 */
export function unknownFieldProblem(
  field: string,
  value: unknown,
  known: readonly string[],
  endpoint: string,
): string | undefined {
  if (INFORMATIONAL_FIELDS.has(field)) return undefined;
  if (UNENFORCED_FIELDS.has(field)) {
    if (saysNothing(value)) return undefined;
    return `LiteLLM's ${field} is not enforced by this gateway; remove it (or send it empty) rather than rely on it`;
  }
  const near = known.length === 0 ? undefined : closest(field, known as string[]);
  if (near !== undefined && distance(field, near) <= 2) return `unknown field; did you mean ${near}?`;
  return `not a field of ${endpoint}; it takes ${known.join(", ")}`;
}

/**
 * `object` as an admin request of `endpoint` (e.g. `/key/generate`): the same parsed value, but a body with a
 * field outside the object's shape is refused as {@link unknownFieldProblem} says, the issue's path being the
 * field. The type a caller passes stays `z.input` of `object`.
 */
export function adminRequest<T extends z.ZodObject>(endpoint: string, object: T) {
  const known = Object.keys(object.shape);
  const knownSet = new Set(known);
  return z
    .unknown()
    .check((ctx) => {
      const body = ctx.value;
      if (typeof body !== "object" || body === null || Array.isArray(body)) return;
      for (const [field, value] of Object.entries(body)) {
        // A field set to undefined is not sent (JSON drops it): nothing to refuse.
        if (knownSet.has(field) || value === undefined) continue;
        const problem = unknownFieldProblem(field, value, known, endpoint);
        if (problem !== undefined)
          ctx.issues.push({ code: "custom", message: problem, path: [field], input: body });
      }
    })
    .pipe(object) as unknown as z.ZodType<z.output<T>, z.input<T>>;
}
