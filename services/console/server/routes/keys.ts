/**
 * The signed-in user's own keys. Every call is scoped to the session's user: the user id never comes from
 * the request, and a key of anyone else answers 404 exactly like an unknown key (no hint that it exists).
 *
 * - `GET /api/keys`: the user's keys (hash, `sk-…abcd`, alias, spend, limits, created, expires, status).
 * - `POST /api/keys`: generates a key; limits can only be tighter than the account's (the gateway refuses
 *   looser ones with a 400 naming the limit). The full key is in this response only (`no-store`).
 * - `POST /api/keys/:token`: changes one of the user's keys (name, limits, models, a new expiry), audited.
 *   A key's MCP grants (`object_permission`) are an operator's (`admin.ts`): a user's request naming them is 403.
 * - `DELETE /api/keys/:token`: revokes one of the user's keys (terminal).
 * - `GET /api/models`: model aliases the gateway serves (for the generate form).
 */
import {
  AdminApiError,
  duration,
  identifier,
  type KeyRecord,
  keyHash,
  limitInputFields,
  modelList,
  type ObjectPermission,
  objectPermission,
  withBudgetForPeriod,
} from "@platform/admin-api";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { forbidden, invalidRequest, notFound, parseForm, parseInput } from "../errors.js";
import { ensureProvisioned } from "../provisioning.js";
import { chatUserId, gatewayFor, type RouteContext, sessionOf } from "./context.js";

/** Default key lifetime. */
export const DEFAULT_KEY_DURATION = "90d";

/** The longest key lifetime the console grants (the form's longest choice), days. */
export const MAX_KEY_DAYS = 365;
const DAYS_PER_UNIT = { s: 1 / 86_400, m: 1 / 1440, h: 1 / 24, d: 1, w: 7, mo: 31 } as const;

/** Days a LiteLLM duration (`90d`, `2w`, `12mo`) lasts at most (a month counts 31 days); null if invalid. */
export function durationDays(text: string): number | null {
  const match = /^([0-9]+)(s|m|h|d|w|mo)$/.exec(text.trim());
  if (match === null) return null;
  return Number(match[1]) * DAYS_PER_UNIT[match[2] as keyof typeof DAYS_PER_UNIT];
}

/**
 * The fields of a `POST /api/keys` body: `name` (the alias) is required; the limits follow the console's
 * rules (`limitInputFields`, the browser's too); `duration` defaults to 90 days and is at most
 * {@link MAX_KEY_DAYS} days (`12mo` is allowed: a year of calendar months).
 */
/** A key's lifetime from now: a LiteLLM duration of at most {@link MAX_KEY_DAYS} days (or `12mo`). */
export const keyLifetime = duration.refine(
  (text) => text.trim() === "12mo" || (durationDays(text) ?? Infinity) <= MAX_KEY_DAYS,
  { message: "A key lives at most 1 year (365 days); generate a new key when it expires." },
);

export const createKeyFields = z.object({
  name: identifier,
  ...limitInputFields,
  duration: keyLifetime.default(DEFAULT_KEY_DURATION),
  models: modelList.optional(),
});
/** `POST /api/keys` body: {@link createKeyFields}, and a budget period only with a budget. */
export const createKeyBody = withBudgetForPeriod(createKeyFields);

/**
 * `POST /api/keys/:token` (and the Admin view's `POST /api/admin/keys/:token`) body, the edit of a key: each
 * field omitted is unchanged; `name` renames; a limit null clears it (the owner's apply); `models` null or
 * empty allows every model; `duration` sets a new lifetime from now (at most a year). Limits follow the
 * console's rules and can only be tighter than the owner's (the gateway refuses looser ones).
 */
const editKeyFields = z.object({
  name: identifier.optional(),
  ...limitInputFields,
  duration: keyLifetime.optional(),
  models: modelList.nullish(),
});
export const editKeyBody = withBudgetForPeriod(editKeyFields);

/**
 * The operator's edit of any key (`POST /api/admin/keys/:token`): {@link editKeyBody} plus LiteLLM's
 * `object_permission` (the MCP servers and tools the key may reach, `{mcp_servers, mcp_tool_permissions}`;
 * null clears it, omitted leaves it), which `/key/update` replaces as a whole.
 */
export const operatorEditKeyBody = withBudgetForPeriod(
  editKeyFields.extend({ object_permission: objectPermission.nullish() }),
);

/** Body fields only an operator may send: a key's MCP grants (deny by default: a user never grants their own key). */
const OPERATOR_ONLY_FIELDS = ["object_permission"] as const;

/**
 * Refuses a user's key request that carries an operator-only field ({@link OPERATOR_ONLY_FIELDS}), rather than
 * dropping it silently.
 * @throws ConsoleError 403 `permission_error` naming the field.
 */
export function refuseOperatorFields(body: unknown): void {
  if (typeof body !== "object" || body === null) return;
  const field = OPERATOR_ONLY_FIELDS.find((f) => f in body);
  if (field !== undefined) {
    throw forbidden(
      `${field} (a key's MCP servers and tools) is set by an operator, in the Admin view's All keys; not on your own keys.`,
    );
  }
}

const tokenParams = z.object({ token: keyHash });

/** The fields of a key the console shows (never the full key; `token` is the hash). */
export function presentKey(key: KeyRecord) {
  return {
    token: key.token,
    key_name: key.key_name,
    key_alias: key.key_alias,
    models: key.models,
    team_id: key.team_id ?? null,
    spend: key.spend,
    max_budget: key.max_budget,
    budget_duration: key.budget_duration,
    tpm_limit: key.tpm_limit,
    rpm_limit: key.rpm_limit,
    created_at: key.created_at,
    expires: key.expires,
    status: key.status,
    /** Refused by the gateway (401) until unblocked; false from gateways older than `/key/block`. */
    blocked: key.blocked ?? false,
    last_used_at: key.last_used_at ?? null,
  };
}

/**
 * The key with hash `token` when it belongs to `userId`.
 * @throws ConsoleError 404 when it does not exist or belongs to someone else (indistinguishable).
 */
export async function ownedKey(ctx: RouteContext, token: string, userId: string | null): Promise<KeyRecord> {
  try {
    const { info } = await ctx.gateway.keyInfo(token);
    if (userId === null || info.user_id === userId) return info;
  } catch (error) {
    if (!(error instanceof AdminApiError && error.status === 404)) throw error;
  }
  throw notFound("No such key.", "token");
}

/** Revokes a key through the gateway and counts it. */
export async function revokeKey(
  ctx: RouteContext,
  request: FastifyRequest,
  token: string,
): Promise<{ revoked: string }> {
  await gatewayFor(ctx, request).deleteKeys({ keys: [token] });
  ctx.metrics.keyOperations.inc({ operation: "revoke" });
  return { revoked: token };
}

/**
 * Blocks (`blocked` true) or unblocks a key through the gateway's `/key/block` / `/key/unblock`, acting as the
 * request's session (the gateway audits it as `key.block` / `key.unblock`), counts it, and answers the listed
 * fields. A blocked key is refused (401) until unblocked; unlike revoking, it can be undone.
 * @throws AdminApiError 404 when the key does not exist; 400 when it is revoked or expired.
 */
export async function blockConsoleKey(
  ctx: RouteContext,
  request: FastifyRequest,
  token: string,
  blocked: boolean,
) {
  const changed = await gatewayFor(ctx, request).blockKey(token, blocked);
  ctx.metrics.keyOperations.inc({ operation: blocked ? "block" : "unblock" });
  request.log.info({ keyHash: token.slice(0, 12), blocked }, "key blocked or unblocked through the console");
  return presentKey(changed);
}

/**
 * The gateway's refusals said in the form's terms, naming whose key it is (`owner`: "You", "This user"): a
 * duplicate alias (`key_alias`, its admin API's term) as `name`; a limit looser than the owner's as "Higher
 * than your account's budget ($10.00): …". Any other error is returned unchanged.
 */
export function inUserTerms(error: unknown, name: string, owner = "You"): unknown {
  if (error instanceof AdminApiError && error.status === 400 && error.body?.error.param === "key_alias") {
    const have = owner === "You" ? "You already have" : `${owner} already has`;
    return invalidRequest(
      `${have} an active key named "${name}". Choose another name or revoke that key.`,
      "name",
    );
  }
  const param = error instanceof AdminApiError ? error.body?.error.param : undefined;
  if (error instanceof AdminApiError && error.status === 400 && param != null && param in LOOSER) {
    // The gateway says `max_budget 20 is looser than the user's max_budget 10: …`; the console says it plainly.
    const ceiling = /looser than the user's \w+ ([0-9.e+-]+)/.exec(error.body?.error.message ?? "")?.[1];
    const whose = owner === "You" ? "your account's" : "the user's";
    const [what, show] = LOOSER[param as keyof typeof LOOSER];
    const limit = ceiling === undefined ? "" : ` (${show(Number(ceiling))})`;
    return invalidRequest(
      `Higher than ${whose} ${what}${limit}: a key's limits can only be tighter than its owner's.`,
      param,
    );
  }
  return error;
}

/** How the console names a limit the gateway refused as looser than the owner's, and shows its value. */
const LOOSER = {
  max_budget: ["budget", (v: number) => `$${v.toFixed(2)}`],
  rpm_limit: ["requests per minute", (v: number) => v.toLocaleString("en-US")],
  tpm_limit: ["tokens per minute", (v: number) => v.toLocaleString("en-US")],
} as const;

/** The limit and lifetime fields of a console key body, as the gateway's `/key/generate` and `/key/update` take them. */
const limitsAndLifetime = (body: z.output<typeof editKeyBody>) => ({
  max_budget: body.max_budget,
  budget_duration: body.budget_duration,
  tpm_limit: body.tpm_limit,
  rpm_limit: body.rpm_limit,
  duration: body.duration,
});

/**
 * Generates a key through the gateway's `/key/generate` for `userId` (null: a key of no user, for the
 * operator's own use or a team's service), acting as the request's session (`x-audit-actor`), and answers 201
 * with the full key (this once, `no-store`) and the listed fields. `options.owner` names whose key it is in
 * messages ({@link inUserTerms}); `options.teamId` makes it a key of that team (LiteLLM's `team_id`).
 * @throws ConsoleError 400 on a duplicate name; the gateway's 400 (looser limit, unknown user or team) unchanged.
 */
export async function generateConsoleKey(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  userId: string | null,
  body: z.output<typeof createKeyBody> & { object_permission?: ObjectPermission | null },
  { owner = "You", teamId = null }: { owner?: string; teamId?: string | null } = {},
) {
  const created = await gatewayFor(ctx, request)
    .generateKey({
      user_id: userId,
      team_id: teamId,
      key_alias: body.name,
      ...limitsAndLifetime(body),
      models: body.models,
      object_permission: body.object_permission ?? undefined,
    })
    .catch((error: unknown) => {
      throw inUserTerms(error, body.name, owner);
    });
  ctx.metrics.keyOperations.inc({ operation: "generate" });
  request.log.info({ keyHash: created.token.slice(0, 12), userId }, "key generated through the console");
  reply.header("cache-control", "no-store");
  return reply.code(201).send({ key: created.key, ...presentKey(created) });
}

/**
 * Changes a key through the gateway's `/key/update` (audited there, acting as the request's session) and
 * answers the listed fields; `owner` as in {@link inUserTerms}.
 * @throws ConsoleError 400 on a duplicate name or a limit looser than the owner's (the console's words).
 */
export async function editConsoleKey(
  ctx: RouteContext,
  request: FastifyRequest,
  key: KeyRecord,
  body: z.output<typeof operatorEditKeyBody>,
  owner = "You",
) {
  const updated = await gatewayFor(ctx, request)
    .updateKey({
      key: key.token,
      key_alias: body.name,
      ...limitsAndLifetime(body),
      models: body.models === undefined ? undefined : (body.models ?? []),
      object_permission: body.object_permission,
    })
    .catch((error: unknown) => {
      throw inUserTerms(error, body.name ?? key.key_alias ?? "", owner);
    });
  ctx.metrics.keyOperations.inc({ operation: "update" });
  request.log.info(
    { keyHash: key.token.slice(0, 12), fields: Object.keys(body) },
    "key changed through the console",
  );
  return presentKey(updated);
}

/** Registers the own-key routes and `GET /api/models`; see the module comment. */
export async function keyRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  app.get("/api/keys", { config: { access: "user" } }, async (request) => {
    const list = await ctx.gateway.listKeys({
      user_id: chatUserId(request),
      size: 100,
      return_full_object: true,
    });
    return { keys: list.keys.filter((k): k is KeyRecord => typeof k !== "string").map(presentKey) };
  });

  app.post("/api/keys", { config: { access: "user" } }, async (request, reply) => {
    refuseOperatorFields(request.body);
    const body = parseForm(createKeyBody, request.body);
    await ensureProvisioned(
      sessionOf(request),
      gatewayFor(ctx, request),
      ctx.config.userDefaults,
      ctx.sessions,
      request.log,
    );
    return generateConsoleKey(ctx, request, reply, chatUserId(request), body);
  });

  app.post("/api/keys/:token", { config: { access: "user" } }, async (request) => {
    const { token } = parseInput(tokenParams, request.params);
    refuseOperatorFields(request.body);
    const body = parseForm(editKeyBody, request.body);
    const key = await ownedKey(ctx, token, chatUserId(request));
    return editConsoleKey(ctx, request, key, body);
  });

  app.delete("/api/keys/:token", { config: { access: "user" } }, async (request) => {
    const { token } = parseInput(tokenParams, request.params);
    await ownedKey(ctx, token, chatUserId(request));
    return revokeKey(ctx, request, token);
  });

  app.get("/api/models", { config: { access: "session" } }, async () => {
    const models = await ctx.gateway.models();
    return { models: models.data.map((m) => m.id) };
  });
}
