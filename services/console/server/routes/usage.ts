/**
 * `GET /api/usage?days=7|30|90`: the signed-in user's usage (per day, per model, per key, the 50 most recent
 * requests), from the gateway's `/spend/usage` scoped to the session's user, and `caching`: the prompt-cache
 * reads and what they saved ({@link CachingSavings}, at the prices of the gateway's `/model/info`). Calls made
 * through a key that is not the user's (the chat's service key, which books the chat user's calls on them) are
 * labelled {@link CHAT_LABEL} without that key's name or hash.
 */
import type { UsageResponse } from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { cachingSavings } from "../caching-savings.js";
import { parseInput } from "../errors.js";
import { allKeys } from "../platform-spend.js";
import { chatUserId, type RouteContext } from "./context.js";

/** The periods the console offers, in days. */
export const USAGE_PERIODS = [7, 30, 90] as const;

/** `?days=` of the usage endpoints: 7, 30 or 90 (default 30). */
export const usagePeriod = z.object({
  days: z.coerce
    .number()
    .refine((d) => (USAGE_PERIODS as readonly number[]).includes(d), { message: "expected 7, 30 or 90" })
    .default(30),
});

/** How the console names calls a user made in the chat (through the chat's service key). */
export const CHAT_LABEL = "Chat";

/**
 * `usage` with every key not in `ownKeys` (hashes) shown as {@link CHAT_LABEL}: no name, no hash (calls
 * without a key keep theirs: null).
 */
export function labelChatUsage(usage: UsageResponse, ownKeys: ReadonlySet<string>): UsageResponse {
  const foreign = (hash: string | null) => hash !== null && !ownKeys.has(hash);
  return {
    ...usage,
    by_key: usage.by_key.map((k) =>
      foreign(k.api_key) ? { ...k, api_key: null, key_name: null, key_alias: CHAT_LABEL } : k,
    ),
    recent: usage.recent.map((r) =>
      foreign(r.api_key) ? { ...r, api_key: null, key_alias: CHAT_LABEL } : r,
    ),
  };
}

/** Registers `GET /api/usage` (a chat user's session). */
export async function usageRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  app.get("/api/usage", { config: { access: "user" } }, async (request) => {
    const { days } = parseInput(usagePeriod, request.query);
    const userId = chatUserId(request);
    const [usage, keys, models] = await Promise.all([
      ctx.gateway.usage({ user_id: userId, days }),
      allKeys(ctx.gateway, userId),
      ctx.gateway.modelInfo(),
    ]);
    // The deployments' ids stay on the server: the browser gets what caching saved.
    const { cache_reads, ...labelled } = labelChatUsage(usage, new Set(keys.map((k) => k.token)));
    return { ...labelled, caching: cachingSavings(cache_reads, models) };
  });
}
