/**
 * The console's own sessions. A session is created from a verified chat sign-in or an operator's master-key
 * sign-in; it ends after `idleTimeoutMs` without a request. Sessions live in a {@link SessionBackend}: Redis
 * when the console has REDIS_URL, else Postgres when it has DATABASE_URL, else process memory (a restart then
 * signs everyone out, and replicas cannot share them). With Redis or Postgres a restart keeps people signed in
 * and every console replica serves every session. The backends key a session by the SHA-256 of its id, so
 * what they store cannot be replayed as a cookie.
 */
import { createHash, randomBytes } from "node:crypto";
import { MemorySessionBackend, type SessionBackend } from "./session-backends.js";

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

/**
 * The audit actor the console names when it calls the gateway's admin API for this session:
 * `console:operator:master-key` for an operator signed in with the master key, `console:user:<chat user id>`.
 */
export const auditActorOf = (principal: SessionPrincipal): string =>
  principal.kind === "operator" ? "console:operator:master-key" : `console:user:${principal.userId}`;

const newId = () => randomBytes(32).toString("base64url");
/** The backend's key of a session: SHA-256 hex of its id. */
const storageKey = (id: string) => createHash("sha256").update(id).digest("hex");

/** Session table with idle expiry over a {@link SessionBackend} (default: memory). */
export class ConsoleSessions {
  constructor(
    private readonly idleTimeoutMs: number,
    private readonly backend: SessionBackend = new MemorySessionBackend(),
  ) {}

  /** Where sessions live: `redis`, `postgres` or `memory`. */
  get kind(): SessionBackend["kind"] {
    return this.backend.kind;
  }

  /** Creates and stores a session for `principal` at `now`. */
  async create(principal: SessionPrincipal, now: number): Promise<ConsoleSession> {
    const session: ConsoleSession = {
      id: newId(),
      principal,
      csrfToken: newId(),
      createdAt: now,
      lastSeenAt: now,
      validatedAt: now,
      provisioned: false,
    };
    await this.save(session);
    return session;
  }

  /**
   * The live session with this id at `now` (touching it), or null when unknown or idle too long (then ended).
   * @throws the backend's error when it cannot be reached.
   */
  async touch(id: string | undefined, now: number): Promise<ConsoleSession | null> {
    if (id === undefined || id === "") return null;
    const stored = await this.backend.get(storageKey(id));
    if (stored === null) return null;
    const session = { ...(JSON.parse(stored) as Omit<ConsoleSession, "id">), id };
    if (now - session.lastSeenAt >= this.idleTimeoutMs) {
      await this.end(id);
      return null;
    }
    session.lastSeenAt = now;
    await this.save(session);
    return session;
  }

  /** Stores a session's current state (after a change: provisioned, re-validated). */
  async save(session: ConsoleSession): Promise<void> {
    const { id, ...rest } = session;
    await this.backend.set(storageKey(id), JSON.stringify(rest), this.idleTimeoutMs, session.lastSeenAt);
  }

  /** Ends a session. */
  async end(id: string): Promise<void> {
    await this.backend.delete(storageKey(id));
  }
}
