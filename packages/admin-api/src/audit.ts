/**
 * The gateway's audit log over the admin API: `GET /audit/logs` (master key), newest first, paged, filtered by
 * actor, action, target (key alias, key hash or its prefix, user id) and time.
 */
import { z } from "zod";
import { identifier, pageNumber, pageSize } from "./fields.js";
import { dateParam } from "./requests.js";

/**
 * Sign-ins to the key console and sign-outs, which the console records through `POST /audit/event`: a chat
 * user's or an operator's sign-in, a refused one (with its reason), a sign-out.
 */
export const CONSOLE_AUDIT_ACTIONS = [
  "console.sign_in",
  "console.sign_in_failed",
  "console.sign_out",
] as const;

/** Actions the audit log records: one per admin write, and the console's sign-in events. */
export const AUDIT_ACTIONS = [
  "key.generate",
  "key.update",
  "key.delete",
  "key.regenerate",
  "key.block",
  "key.unblock",
  "user.new",
  "user.update",
  "user.delete",
  "team.new",
  "team.update",
  "team.delete",
  "team.block",
  "team.unblock",
  "team.member_add",
  "team.member_update",
  "team.member_delete",
  ...CONSOLE_AUDIT_ACTIONS,
] as const;

/** `GET /audit/logs` query: `page` from 1, `page_size` 1..200 (default 50); dates as in /spend/logs. */
export const auditLogsQuery = z.object({
  actor: identifier.optional(),
  action: z.enum(AUDIT_ACTIONS).optional(),
  key_alias: identifier.optional(),
  /** A key's hash, or its first 12 or more hex characters. */
  key_hash: z
    .string()
    .regex(/^[0-9a-f]{12,64}$/, "expected 12 to 64 lowercase hex characters of a key's hash")
    .optional(),
  user_id: identifier.optional(),
  /** The team a row concerns: the team's own writes, its memberships' and its keys'. */
  team_id: identifier.optional(),
  start_date: dateParam,
  end_date: dateParam,
  page: pageNumber(1),
  page_size: pageSize(50, 200),
});
export type AuditLogsParams = z.input<typeof auditLogsQuery>;

/**
 * `POST /audit/event` body (master key; the console's `x-audit-actor` names who): one of
 * {@link CONSOLE_AUDIT_ACTIONS}, the chat user it concerns, the address the browser came from (the console
 * sees it; the gateway sees the console's), and for a refused sign-in the reason (the console's
 * `console_sign_ins_total` result: `bad_master_key`, `expired`, …).
 */
export const auditEventRequest = z.strictObject({
  action: z.enum(CONSOLE_AUDIT_ACTIONS),
  user_id: identifier.optional(),
  source_ip: z
    .string()
    .regex(/^[0-9A-Fa-f:.]{2,45}$/, "expected an IPv4 or IPv6 address")
    .optional(),
  reason: z
    .string()
    .regex(/^[a-z_]{1,64}$/, "expected a reason in lowercase letters and underscores")
    .optional(),
});
export type AuditEventRequest = z.infer<typeof auditEventRequest>;
/** `POST /audit/event` answer. */
export const auditEventResponse = z.looseObject({ recorded: z.literal(true) });

/** One audit row: who (actor, and the credential `via`), what, to what, the changed fields, when, from where. */
export const auditLogEntry = z.looseObject({
  id: z.string(),
  created_at: z.string(),
  actor: z.string(),
  via: z.string(),
  action: z.string(),
  key_alias: z.string().nullable(),
  /** First 12 hex characters of the key's SHA-256. */
  key_hash_prefix: z.string().nullable(),
  user_id: z.string().nullable(),
  before: z.record(z.string(), z.unknown()).nullable(),
  after: z.record(z.string(), z.unknown()).nullable(),
  request_id: z.string().nullable(),
  source_ip: z.string().nullable(),
});
export type AuditLogEntry = z.infer<typeof auditLogEntry>;

/** `GET /audit/logs` answer. */
export const auditLogsResponse = z.looseObject({
  logs: z.array(auditLogEntry),
  total: z.number(),
  page: z.number(),
  page_size: z.number(),
  total_pages: z.number(),
});
export type AuditLogsResponse = z.infer<typeof auditLogsResponse>;
