/**
 * Spend reads: `/spend/logs` (LiteLLM's `LiteLLM_SpendLogs` row shape, newest first) and `/spend/usage`, the
 * aggregates the key console shows for one user, one key, one team or the whole platform (per day over `days`
 * days ending with `end_date`, default today, with empty days as zeros; per model, per key, the 50 most recent
 * requests), and LiteLLM's spend-by-team report `/global/spend/teams` (`spend/team-report.ts`).
 */

import {
  isDateOnly,
  LAST_DATE_MS,
  spendLogsQuery as logsQuery,
  spendUsageQuery as usageQuery,
} from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import { invalidRequest } from "../../errors/gateway-error.js";
import { toKeyHash } from "../../keys/key-material.js";
import { querySpendLogs, queryUsage, type UsageScope } from "../../spend/queries.js";
import { globalSpendByTeam } from "../../spend/team-report.js";
import { type AdminContext, adminRoute } from "./context.js";
import { parse } from "./validation.js";

const DAY_MS = 86_400_000;

/** Start of a range: the given instant, or the start of the given UTC day. */
export const rangeStart = (v: string | undefined) => (v === undefined ? undefined : Date.parse(v));
/** End of a range, exclusive: the given instant, or the end of the given UTC day (at most the end of 9999). */
export const rangeEnd = (v: string | undefined) =>
  v === undefined
    ? undefined
    : Math.min(Date.parse(v) + (isDateOnly(v) ? DAY_MS : 0), LAST_DATE_MS + DAY_MS - 1);

/** Registers /spend/logs, /spend/usage and /global/spend/teams. */
export function registerSpendRoutes(app: FastifyInstance, context: AdminContext): void {
  const { pool, clock } = context;

  adminRoute(app, "GET", "/spend/logs", async (request) => {
    const query = parse(logsQuery, request.query);
    const startTime = rangeStart(query.start_date);
    const endTime = rangeEnd(query.end_date);
    if (startTime !== undefined && endTime !== undefined && endTime <= startTime) {
      throw invalidRequest("end_date must be after start_date.", "end_date");
    }
    return querySpendLogs(pool, {
      keyHash: query.api_key === undefined ? undefined : toKeyHash(query.api_key),
      userId: query.user_id,
      teamId: query.team_id,
      startTime,
      endTime,
      limit: query.limit,
    });
  });

  adminRoute(app, "GET", "/spend/usage", async (request) => {
    const query = parse(usageQuery, request.query);
    const scope: UsageScope =
      query.user_id !== undefined
        ? { userId: query.user_id }
        : query.api_key !== undefined
          ? { keyHash: toKeyHash(query.api_key) }
          : query.team_id !== undefined
            ? { teamId: query.team_id }
            : {};
    return queryUsage(pool, scope, query.days, clock.now(), query.end_date);
  });

  adminRoute(app, "GET", "/global/spend/teams", async () => globalSpendByTeam(pool, clock.now()));
}
