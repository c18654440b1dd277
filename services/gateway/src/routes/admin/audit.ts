/**
 * `GET /audit/logs` (master key): the audit log, newest first, filtered and paged (`audit/query.ts`).
 * `POST /audit/event` (master key): the key console records a sign-in, a refused sign-in or a sign-out
 * (`auditEventRequest` of @platform/admin-api), as the actor its `x-audit-actor` names, from the browser's
 * address it gives (the console is the gateway's caller, so `request.ip` would be the console's).
 */
import { auditEventRequest, auditLogsQuery } from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import { queryAuditLog } from "../../audit/query.js";
import { appendAudit, auditActor } from "../../audit/record.js";
import { invalidRequest } from "../../errors/gateway-error.js";
import type { AdminContext } from "./context.js";
import { adminRoute } from "./context.js";
import { rangeEnd, rangeStart } from "./spend.js";
import { parse } from "./validation.js";

/** Registers GET /audit/logs and POST /audit/event. */
export function registerAuditRoutes(app: FastifyInstance, context: AdminContext): void {
  adminRoute(app, "POST", "/audit/event", async (request) => {
    const event = parse(auditEventRequest, request.body);
    const who = auditActor(request);
    await appendAudit(
      context.pool,
      { ...who, source: event.source_ip ?? who.source },
      {
        action: event.action,
        target: { userId: event.user_id ?? null },
        before: null,
        after: event.reason === undefined ? null : { reason: event.reason },
      },
      context.clock.now(),
    );
    return { recorded: true };
  });

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
