/**
 * Reads the chat's sign-in: LibreChat's `refreshToken` cookie is an HS256 JWT `{id, sessionId}` signed with
 * JWT_REFRESH_SECRET (api/server/services/AuthService.js `setAuthTokens` in LibreChat-AI/LibreChat). It counts
 * only while its session document still exists with the same token hash and an expiration in the future: a
 * logout deletes the session, so a still-valid JWT is refused. LibreChat's refresh endpoint is never called
 * (it rotates the token and would sign the user out of the chat).
 */
import { createHash } from "node:crypto";
import { errors as joseErrors, jwtVerify } from "jose";
import type { LibreChatStore } from "./librechat-store.js";

/** The chat's cookie name. */
export const CHAT_COOKIE = "refreshToken";

/** A verified chat identity. */
export interface ChatIdentity {
  userId: string;
  sessionId: string;
  email: string;
  /** LibreChat role (`ADMIN`, `USER`, or a custom name). */
  role: string;
}

/** Why a chat cookie was not accepted (a fixed set: used as a metric label). */
export type ChatRefusal =
  | "no_cookie"
  | "bad_token"
  | "expired_token"
  | "no_session"
  | "session_mismatch"
  | "session_expired"
  | "no_user"
  | "store_unavailable";

/** The outcome of {@link verifyChatCookie}. */
export type ChatVerdict =
  | { ok: true; identity: ChatIdentity }
  | { ok: false; reason: ChatRefusal; detail?: string };

/** SHA-256 hex of a token, as LibreChat stores `refreshTokenHash`. */
export const sha256Hex = (text: string): string => createHash("sha256").update(text).digest("hex");

/**
 * Verifies the chat's refresh token and its session and user documents.
 * @param token the `refreshToken` cookie value, or undefined.
 * @param secret JWT_REFRESH_SECRET.
 * @param now epoch ms (session expiration and JWT `exp` are checked against it).
 */
export async function verifyChatCookie(
  token: string | undefined,
  secret: string,
  store: LibreChatStore,
  now: number,
): Promise<ChatVerdict> {
  if (token === undefined || token === "") return { ok: false, reason: "no_cookie" };
  let userId: string;
  let sessionId: string;
  try {
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), {
      algorithms: ["HS256"],
      currentDate: new Date(now),
    });
    if (typeof payload.id !== "string" || typeof payload.sessionId !== "string") {
      return { ok: false, reason: "bad_token", detail: "payload lacks id or sessionId" };
    }
    userId = payload.id;
    sessionId = payload.sessionId;
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) return { ok: false, reason: "expired_token" };
    return { ok: false, reason: "bad_token", detail: (error as Error).message };
  }
  try {
    const session = await store.findSession(sessionId);
    if (session === null) return { ok: false, reason: "no_session" };
    if (session.userId !== userId || session.refreshTokenHash !== sha256Hex(token)) {
      return { ok: false, reason: "session_mismatch" };
    }
    if (session.expiration.getTime() <= now) return { ok: false, reason: "session_expired" };
    const user = await store.findUser(userId);
    if (user === null) return { ok: false, reason: "no_user" };
    return { ok: true, identity: { userId, sessionId, email: user.email, role: user.role } };
  } catch (error) {
    return { ok: false, reason: "store_unavailable", detail: (error as Error).message };
  }
}
