/**
 * The console's own sessions, kept in memory (one console process per stack). A session is created from a
 * verified chat sign-in or an operator's master-key sign-in; it ends after `idleTimeoutMs` without a request.
 * A restart only costs a chat user a re-check of the chat cookie (done on their next request).
 */
import { randomBytes } from "node:crypto";

/** Who a session belongs to. */
export type SessionPrincipal =
  | { kind: "chat"; userId: string; chatSessionId: string; email: string; role: string }
  | { kind: "operator" };

/** One console session. Times epoch ms. */
export interface ConsoleSession {
  /** Random id, the value of the console's cookie. */
  id: string;
  principal: SessionPrincipal;
  /** Double-submit token state-changing requests must echo in `x-csrf-token`. */
  csrfToken: string;
  createdAt: number;
  lastSeenAt: number;
  /** When the chat session was last checked against the chat's database. */
  validatedAt: number;
  /** Set once the gateway has the user (JIT provisioning), so it is not asked again. */
  provisioned: boolean;
}

/** True when the principal is an administrator: an operator, or a chat user whose role is exactly `ADMIN`. */
export const isAdmin = (principal: SessionPrincipal): boolean =>
  principal.kind === "operator" || principal.role === "ADMIN";

const newId = () => randomBytes(32).toString("base64url");

/** In-memory session table with idle expiry. */
export class ConsoleSessions {
  private readonly sessions = new Map<string, ConsoleSession>();

  constructor(private readonly idleTimeoutMs: number) {}

  /** Creates a session for `principal` at `now`. */
  create(principal: SessionPrincipal, now: number): ConsoleSession {
    this.sweep(now);
    const session: ConsoleSession = {
      id: newId(),
      principal,
      csrfToken: newId(),
      createdAt: now,
      lastSeenAt: now,
      validatedAt: now,
      provisioned: false,
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id at `now` (touching it), or null when unknown or idle too long (then ended). */
  touch(id: string | undefined, now: number): ConsoleSession | null {
    if (id === undefined) return null;
    const session = this.sessions.get(id);
    if (session === undefined) return null;
    if (now - session.lastSeenAt >= this.idleTimeoutMs) {
      this.sessions.delete(id);
      return null;
    }
    session.lastSeenAt = now;
    return session;
  }

  /** Ends a session. */
  end(id: string): void {
    this.sessions.delete(id);
  }

  /** Number of live sessions (after the last sweep). */
  get size(): number {
    return this.sessions.size;
  }

  private sweep(now: number): void {
    for (const [id, session] of this.sessions) {
      if (now - session.lastSeenAt >= this.idleTimeoutMs) this.sessions.delete(id);
    }
  }
}
