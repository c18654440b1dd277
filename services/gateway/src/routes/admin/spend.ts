/**
 * Spend reads: `/spend/logs` (LiteLLM's `LiteLLM_SpendLogs` row shape, newest first) and `/spend/usage`, the
 * aggregates the key console shows for one user or one key (per day over 7/30/90 days with empty days as
 * zeros, per model, per key, the 50 most recent requests).
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { invalidRequest } from "../../errors/gateway-error.js";
import { toKeyHash } from "../../keys/key-material.js";
import { querySpendLogs, queryUsage } from "../../spend/queries.js";
import { type AdminContext, adminRoute } from "./context.js";
import { identifier, pageSize, parse } from "./validation.js";

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

/** Earliest and latest instants a date parameter may name (Postgres `timestamptz` takes years 4713 BC–294276). */
const FIRST_DAY = Date.UTC(1970, 0, 1);
const LAST_DAY = Date.UTC(9999, 11, 31);

/** `YYYY-MM-DD` (a UTC day) or an ISO 8601 time between 1970-01-01 and 9999-12-31; becomes epoch ms. */
const dateParam = z
  .string()
  .refine((v) => !Number.isNaN(Date.parse(v)), {
    message: "expected a date (YYYY-MM-DD) or an ISO 8601 time",
  })
  .refine((v) => Date.parse(v) >= FIRST_DAY && Date.parse(v) <= LAST_DAY, {
    message: "expected a date between 1970-01-01 and 9999-12-31",
  })
  .optional();

const logsQuery = z.object({
  api_key: identifier.optional(),
  user_id: identifier.optional(),
  start_date: dateParam,
  end_date: dateParam,
  limit: pageSize(100, 1000),
});

const usageQuery = z
  .object({
    user_id: identifier.optional(),
    api_key: identifier.optional(),
    days: z.coerce.number().int().min(1).max(366).default(30),
  })
  .refine((q) => (q.user_id === undefined) !== (q.api_key === undefined), {
    message: "give exactly one of user_id or api_key",
    path: ["user_id"],
  });

/** Start of a range: the given instant, or the start of the given UTC day. */
const rangeStart = (v: string | undefined) => (v === undefined ? undefined : Date.parse(v));
/** End of a range, exclusive: the given instant, or the end of the given UTC day (at most the end of 9999). */
const rangeEnd = (v: string | undefined) =>
  v === undefined
    ? undefined
    : Math.min(Date.parse(v) + (DATE_ONLY.test(v) ? DAY_MS : 0), LAST_DAY + DAY_MS - 1);

/** Registers /spend/logs and /spend/usage. */
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
      startTime,
      endTime,
      limit: query.limit,
    });
  });

  adminRoute(app, "GET", "/spend/usage", async (request) => {
    const query = parse(usageQuery, request.query);
    const scope =
      query.user_id !== undefined
        ? { userId: query.user_id }
        : { keyHash: toKeyHash(query.api_key as string) };
    return queryUsage(pool, scope, query.days, clock.now());
  });
}
