/**
 * `GET /api/usage?days=7|30|90`: the signed-in user's usage (per day, per model, per key, the 50 most recent
 * requests), from the gateway's `/spend/usage` scoped to the session's user.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { parseInput } from "../errors.js";
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

/** Registers `GET /api/usage` (a chat user's session). */
export async function usageRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  app.get("/api/usage", { config: { access: "user" } }, async (request) => {
    const { days } = parseInput(usagePeriod, request.query);
    return ctx.gateway.usage({ user_id: chatUserId(request), days });
  });
}
