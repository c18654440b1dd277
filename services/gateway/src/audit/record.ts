/**
 * The audit log (`audit_log`, append-only): one row per admin write, inserted in the same transaction as the
 * change, naming who did it (the actor), what (the action), to what (the target: key alias and hash prefix,
 * user id), the changed fields before and after (never a key or its full hash; values under secret-looking
 * metadata fields redacted, `audit/redact.ts`), the request id and the source address. An update that changes
 * nothing writes no row.
 *
 * The actor: a master-key call is `master_key`; a call the console makes on someone's behalf carries the
 * header `x-audit-actor` (`console:operator:<name>` or `console:user:<user id>`), which the gateway trusts only
 * on a master-key call (the console holds the master key; virtual keys cannot call the admin API). `via`
 * records the credential the call was made with (`master_key`).
 */
import type { AUDIT_ACTIONS } from "@platform/admin-api";
import type { FastifyRequest } from "fastify";
import type { Queryable } from "../db/transaction.js";
import { invalidRequest } from "../errors/gateway-error.js";
import { redactSecrets } from "./redact.js";

/** The header the console names its operator or user in. */
export const AUDIT_ACTOR_HEADER = "x-audit-actor";

/** What an admin write did (LiteLLM's route names; the list is `AUDIT_ACTIONS` of @platform/admin-api). */
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What was changed. */
export interface AuditTarget {
  keyAlias?: string | null;
  /** SHA-256 hex of the key; stored as its first 12 characters only. */
  keyHash?: string | null;
  userId?: string | null;
  teamId?: string | null;
}

/** One row to append. `before`/`after` hold only the fields that changed (null for a creation's before). */
export interface AuditEntry {
  action: AuditAction;
  target: AuditTarget;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/** Who made a request and from where. */
export interface AuditActor {
  actor: string;
  via: string;
  requestId: string;
  source: string;
}

const ACTOR_FORMAT = /^console:(operator|user):[\x21-\x7e]{1,200}$/;

/**
 * The actor of an admin request (the master key's, or the console's `x-audit-actor`).
 * @throws GatewayError 400 naming `x-audit-actor` when the header is present but not
 *   `console:operator:<name>` or `console:user:<id>` (printable ASCII, at most 200 characters).
 */
export function auditActor(request: FastifyRequest): AuditActor {
  const header = request.headers[AUDIT_ACTOR_HEADER];
  const named = Array.isArray(header) ? header[0] : header;
  if (named !== undefined && !ACTOR_FORMAT.test(named)) {
    throw invalidRequest(
      `${AUDIT_ACTOR_HEADER} must be console:operator:<name> or console:user:<user id> (printable ASCII, at most 200 characters).`,
      AUDIT_ACTOR_HEADER,
    );
  }
  return { actor: named ?? "master_key", via: "master_key", requestId: request.id, source: request.ip };
}

/** Fields never written to the log: the key's hash (only its prefix is), bookkeeping times, derived status. */
const NOT_LOGGED = new Set([
  "token",
  "key",
  "created_at",
  "updated_at",
  "status",
  "spend",
  "budget_reset_at",
]);

/**
 * The fields that differ between two presented records (`presentKey`/`presentUser` shapes), as before/after
 * maps; a creation (before null) logs every field of `after`. Values are compared as given, then stored with
 * secrets redacted ({@link redactSecrets}): a changed password shows as a changed field whose both sides read
 * `[redacted]`.
 */
export function changedFields(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): { before: Record<string, unknown> | null; after: Record<string, unknown> | null } {
  const names = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  const was: Record<string, unknown> = {};
  const now: Record<string, unknown> = {};
  for (const name of names) {
    if (NOT_LOGGED.has(name)) continue;
    const a = before?.[name];
    const b = after?.[name];
    if (before !== null && after !== null && JSON.stringify(a) === JSON.stringify(b)) continue;
    if (before !== null) was[name] = redactSecrets(a ?? null);
    if (after !== null) now[name] = redactSecrets(b ?? null);
  }
  return { before: before === null ? null : was, after: after === null ? null : now };
}

/** A change to log: the target's presented record before (null for a creation) and after it. */
export interface AuditChange {
  action: AuditAction;
  target: AuditTarget;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/**
 * Appends the row of one change (inside the caller's transaction), holding only the fields that changed
 * ({@link changedFields}); an update whose before and after do not differ writes nothing.
 * @returns whether a row was written.
 */
export async function appendChange(
  db: Queryable,
  who: AuditActor,
  change: AuditChange,
  now: number,
): Promise<boolean> {
  const fields = changedFields(change.before, change.after);
  const unchanged =
    change.before !== null && change.after !== null && Object.keys(fields.after ?? {}).length === 0;
  if (unchanged) return false;
  await appendAudit(db, who, { action: change.action, target: change.target, ...fields }, now);
  return true;
}

/** Appends one audit row (inside the caller's transaction). */
export async function appendAudit(
  db: Queryable,
  who: AuditActor,
  entry: AuditEntry,
  now: number,
): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (created_at, actor, via, action, key_alias, key_hash_prefix, user_id, before, after,
       request_id, source_ip, team_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      new Date(now),
      who.actor,
      who.via,
      entry.action,
      entry.target.keyAlias ?? null,
      entry.target.keyHash == null ? null : entry.target.keyHash.slice(0, 12),
      entry.target.userId ?? null,
      entry.before === null ? null : JSON.stringify(entry.before),
      entry.after === null ? null : JSON.stringify(entry.after),
      who.requestId,
      who.source,
      entry.target.teamId ?? null,
    ],
  );
}
