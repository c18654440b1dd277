/** `GET /audit/logs` (master key): the audit log, newest first, filtered and paged (`audit/query.ts`). */
import { auditLogsQuery } from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import { queryAuditLog } from "../../audit/query.js";
import { invalidRequest } from "../../errors/gateway-error.js";
import type { AdminContext } from "./context.js";
import { adminRoute } from "./context.js";
import { rangeEnd, rangeStart } from "./spend.js";
import { parse } from "./validation.js";

/** Registers GET /audit/logs. */
export function registerAuditRoutes(app: FastifyInstance, context: AdminContext): void {
  adminRoute(app, "GET", "/audit/logs", async (request) => {
    const query = parse(auditLogsQuery, request.query);
    const startTime = rangeStart(query.start_date);
    const endTime = rangeEnd(query.end_date);
    if (startTime !== undefined && endTime !== undefined && endTime <= startTime) {
      throw invalidRequest("end_date must be after start_date.", "end_date");
    }
    const { logs, total } = await queryAuditLog(
      context.pool,
      {
        actor: query.actor,
        action: query.action,
        keyAlias: query.key_alias,
        keyHash: query.key_hash,
        userId: query.user_id,
        teamId: query.team_id,
        startTime,
        endTime,
      },
      query.page,
      query.page_size,
    );
    return {
      logs,
      total,
      page: query.page,
      page_size: query.page_size,
      total_pages: Math.ceil(total / query.page_size),
    };
  });
}
