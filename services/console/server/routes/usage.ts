/**
 * `GET /api/usage?days=7|30|90` or `?from=&to=` (UTC days; `usage-period.ts`): the signed-in user's usage (per day, per model, per key, the 50 most recent
 * requests), from the gateway's `/spend/usage` scoped to the session's user, and `caching`: the prompt-cache
 * reads and what they saved ({@link CachingSavings}, at the prices of the gateway's `/model/info`). Calls made
 * through a key that is not the user's (the chat's service key, which books the chat user's calls on them) are
 * labelled {@link CHAT_LABEL} without that key's name or hash.
 */
import type { SpendLog, UsageResponse } from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import { cachingSavings } from "../caching-savings.js";
import { parseInput } from "../errors.js";
import { allKeys } from "../platform-spend.js";
import { logsRange, usagePeriod } from "../usage-period.js";
import { chatUserId, type RouteContext } from "./context.js";

/** How the console names calls a user made in the chat (through the chat's service key). */
export const CHAT_LABEL = "Chat";

/**
 * `usage` with every key not in `ownKeys` (hashes) shown as {@link CHAT_LABEL}: no name, no hash (calls
 * without a key keep theirs: null).
 */
export function labelChatUsage(usage: UsageResponse, ownKeys: ReadonlySet<string>): UsageResponse {
  return {
    ...usage,
    by_key: usage.by_key.map((k) =>
      foreign(k.api_key, ownKeys) ? { ...k, api_key: null, key_name: null, key_alias: CHAT_LABEL } : k,
    ),
    recent: labelChatRows(usage.recent, ownKeys),
  };
}

/** Whether a key hash is set and not among `ownKeys`. */
const foreign = (hash: string | null, ownKeys: ReadonlySet<string>) => hash !== null && !ownKeys.has(hash);

/** Spend log rows with every key not in `ownKeys` shown as {@link CHAT_LABEL} (see {@link labelChatUsage}). */
export function labelChatRows(rows: SpendLog[], ownKeys: ReadonlySet<string>): SpendLog[] {
  return rows.map((r) => (foreign(r.api_key, ownKeys) ? { ...r, api_key: null, key_alias: CHAT_LABEL } : r));
}

/** Most requests `GET /api/usage/requests` lists (the gateway's `/spend/logs` page maximum, as the CSV). */
export const REQUESTS_LIMIT = 1000;

/**
 * Registers `GET /api/usage` and `GET /api/usage/requests` (the period's requests, newest first, at most
 * {@link REQUESTS_LIMIT}, with `truncated` when the period had more; the Usage tab pages through them), for a
 * chat user's session.
 */
export async function usageRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  app.get("/api/usage", { config: { access: "user" } }, async (request) => {
    const period = parseInput(usagePeriod, request.query);
    const userId = chatUserId(request);
    const [usage, keys, models] = await Promise.all([
      ctx.gateway.usage({ user_id: userId, days: period.days, end_date: period.end_date }),
      allKeys(ctx.gateway, userId),
      ctx.gateway.modelInfo(),
    ]);
    // The deployments' ids stay on the server: the browser gets what caching saved.
    const { cache_reads, ...labelled } = labelChatUsage(usage, new Set(keys.map((k) => k.token)));
    return { ...labelled, caching: cachingSavings(cache_reads, models) };
  });

  app.get("/api/usage/requests", { config: { access: "user" } }, async (request) => {
    const period = parseInput(usagePeriod, request.query);
    const userId = chatUserId(request);
    const [rows, keys] = await Promise.all([
      ctx.gateway.spendLogs({ user_id: userId, ...logsRange(period, ctx.now()), limit: REQUESTS_LIMIT }),
      allKeys(ctx.gateway, userId),
    ]);
    return {
      requests: labelChatRows(rows, new Set(keys.map((k) => k.token))),
      truncated: rows.length >= REQUESTS_LIMIT,
    };
  });
}
