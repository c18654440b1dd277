/**
 * Spend export as CSV, the same period as on screen (`?days=7|30|90` or `?from=&to=`, `usage-period.ts`), read from the gateway's
 * `/spend/logs` (newest first) and streamed out row by row:
 *
 * - `GET /api/usage/export.csv`: the signed-in user's requests.
 * - `GET /api/admin/spend/export.csv`: every request of the platform (administrators): keys of users, keys of
 *   no user and master-key calls, each with its user's id and e-mail when it has one.
 *
 * At most {@link EXPORT_LIMIT} rows (the gateway's page maximum); `x-export-truncated: true` says the period
 * had more. Cells that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`) are prefixed with `'`.
 */
import { Readable } from "node:stream";
import type { SpendLog } from "@platform/admin-api";
import type { FastifyInstance, FastifyReply } from "fastify";
import { parseInput } from "../errors.js";
import { allUsers } from "../platform-spend.js";
import { logsRange, periodName, type UsagePeriod, usagePeriod } from "../usage-period.js";
import { chatUserId, type RouteContext } from "./context.js";

/** Most rows in one export. */
export const EXPORT_LIMIT = 1000;

/** The CSV columns, in order. */
export const EXPORT_COLUMNS = [
  "time",
  "request_id",
  "user_id",
  "user_email",
  "model",
  "key_alias",
  "key_hash",
  "team_id",
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
  "cached_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "spend_usd",
  "status",
  "reason",
] as const;

/** One CSV cell (RFC 4180 quoting; formula-looking text prefixed with `'`). */
export function csvCell(value: string | number | null): string {
  if (value === null) return "";
  if (typeof value === "number") return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n']/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The CSV lines (header first, CRLF-terminated) of spend log rows; `emails` gives a user id's e-mail (a row of
 * no user, e.g. a master-key call, has both user cells empty). The token breakdown (`cached_tokens`: prompt
 * tokens read from the provider's prompt cache; `cache_write_tokens`: written to it, 5-minute and 1-hour;
 * `reasoning_tokens`: of the completion tokens) is empty when the upstream reported no usage. `reason`: why a
 * refused or failed call failed, as the gateway names it (`budget_exceeded`, `rate_limit_error`,
 * `guardrail_violation`, `upstream_error`, …), empty for an answered call.
 */
export function* csvLines(rows: SpendLog[], emails: ReadonlyMap<string, string | null>): Generator<string> {
  yield `${EXPORT_COLUMNS.join(",")}\r\n`;
  for (const r of rows) {
    const details = r.usage_details ?? undefined; // null: billed from estimates (no usage reported)
    const cells = [
      r.startTime,
      r.request_id,
      r.user,
      r.user === null ? null : (emails.get(r.user) ?? null),
      r.model_group,
      r.key_alias,
      r.api_key,
      r.team_id ?? null,
      r.prompt_tokens,
      r.completion_tokens,
      r.total_tokens,
      details?.cache_read ?? null,
      details === undefined ? null : details.cache_write_5m + details.cache_write_1h,
      details?.output_reasoning ?? null,
      r.spend,
      r.status,
      r.reason ?? null,
    ];
    yield `${cells.map(csvCell).join(",")}\r\n`;
  }
}

/** Registers the two export routes; see the module comment. */
export async function exportRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  const send = async (reply: FastifyReply, name: string, period: UsagePeriod, userId?: string) => {
    const [rows, users] = await Promise.all([
      ctx.gateway.spendLogs({ user_id: userId, ...logsRange(period, ctx.now()), limit: EXPORT_LIMIT }),
      allUsers(ctx.gateway),
    ]);
    const emails = new Map(users.map((u) => [u.user_id, u.user_email]));
    const today = new Date(ctx.now()).toISOString().slice(0, 10);
    return reply
      .type("text/csv; charset=utf-8")
      .header("content-disposition", `attachment; filename="${name}-${periodName(period)}-${today}.csv"`)
      .header("cache-control", "no-store")
      .header("x-export-rows", String(rows.length))
      .header("x-export-truncated", String(rows.length >= EXPORT_LIMIT))
      .send(Readable.from(csvLines(rows, emails)));
  };
  app.get("/api/usage/export.csv", { config: { access: "user" } }, async (request, reply) => {
    return send(reply, "usage", parseInput(usagePeriod, request.query), chatUserId(request));
  });
  app.get("/api/admin/spend/export.csv", { config: { access: "admin" } }, async (request, reply) => {
    return send(reply, "platform-spend", parseInput(usagePeriod, request.query));
  });
}
