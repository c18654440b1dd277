/**
 * Sign-ins to the console in the gateway's audit log (`POST /audit/event`, docs/security.md): a chat user's or
 * an operator's sign-in (`console.sign_in`), a refused one with its reason (`console.sign_in_failed`; the
 * reason is `console_sign_ins_total`'s result: `bad_master_key`, `expired`, …), and a sign-out
 * (`console.sign_out`), each from the browser's address (`request.ip`: the console trusts its proxy's
 * `x-forwarded-for`). The actor is the session's (`auditActorOf`); a refused sign-in names nobody it could
 * trust: `console:user:unknown` or `console:operator:unknown`.
 *
 * Off the sign-in's path: the write is not awaited, and a failed write is logged (a warning, no secret), never
 * turned into a failed sign-in.
 */
import type { AdminApiClient } from "@platform/admin-api";
import type { FastifyRequest } from "fastify";
import { auditActorOf, type SessionPrincipal } from "./console-sessions.js";

/** One sign-in event: who signed in or out, or where a refused sign-in came from (chat or operator) and why. */
export type SignInEvent =
  | { action: "console.sign_in" | "console.sign_out"; principal: SessionPrincipal }
  | { action: "console.sign_in_failed"; source: "chat" | "operator"; reason: string };

/** An address the gateway accepts as `source_ip` (IPv4, IPv6, IPv4-mapped IPv6). */
const ADDRESS = /^[0-9A-Fa-f:.]{2,45}$/;

/** Records `event` in the gateway's audit log, not awaited (see the module comment). */
export function auditSignIn(gateway: AdminApiClient, request: FastifyRequest, event: SignInEvent): void {
  const actor =
    "principal" in event
      ? auditActorOf(event.principal)
      : `console:${event.source === "chat" ? "user" : "operator"}:unknown`;
  const userId = "principal" in event && event.principal.kind === "chat" ? event.principal.userId : undefined;
  gateway
    .as(actor)
    .recordAuditEvent({
      action: event.action,
      ...(userId === undefined ? {} : { user_id: userId }),
      ...(ADDRESS.test(request.ip) ? { source_ip: request.ip } : {}),
      ...("reason" in event ? { reason: event.reason } : {}),
    })
    .catch((error: unknown) => {
      request.log.warn(
        { err: error instanceof Error ? error.message : String(error), action: event.action },
        "sign-in event not recorded in the gateway's audit log",
      );
    });
}
