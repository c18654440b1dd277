/**
 * The chat's service key (CHAT_SERVICE_KEY): a virtual key the chat (LibreChat) calls the gateway with instead
 * of the master key, allowed to name the chat user each call is booked on (`users/attribution.ts`). The stack
 * generates its value and hands it to both the chat and the gateway; the gateway makes sure at start-up that
 * the key exists, so the operator does nothing by hand.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Queryable } from "../db/transaction.js";
import { hashKey, keyDisplayName, looksLikeVirtualKey } from "./key-material.js";
import { keyStatus } from "./records.js";
import { findKey } from "./repository.js";

/** `key_alias` of the chat's service key. */
export const SERVICE_KEY_ALIAS = "chat-service";
/** Metadata of the chat's service key: `user_headers: true` lets it name users. */
export const SERVICE_KEY_METADATA = { service: "chat", user_headers: true } as const;

/** What {@link ensureServiceKey} found or did. */
export type ServiceKeyState = "created" | "exists" | "revoked" | "expired" | "cannot-name-users";

/**
 * Makes sure a key with the value `key` exists (idempotent, safe with several instances starting at once): a new
 * row stores only the key's SHA-256 (alias {@link SERVICE_KEY_ALIAS}, no user, no limits, no expiry, metadata
 * {@link SERVICE_KEY_METADATA}). An existing row is left as it is (an operator's revocation or limits stay);
 * when it is revoked, expired or no longer has `user_headers: true`, a warning says that chat calls are refused
 * or not attributed and how to recover (a new CHAT_SERVICE_KEY).
 * @param now epoch ms.
 * @throws Error when `key` does not look like a virtual key (`sk-`, 20–256 characters); the database's error.
 */
export async function ensureServiceKey(
  db: Queryable,
  key: string,
  now: number,
  log: FastifyBaseLogger,
): Promise<ServiceKeyState> {
  if (!looksLikeVirtualKey(key)) {
    throw new Error("CHAT_SERVICE_KEY must start with sk- and be 20 to 256 characters long.");
  }
  const token = hashKey(key);
  const inserted = await db.query(
    `INSERT INTO keys (token, key_name, key_alias, metadata, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (token) DO NOTHING`,
    [token, keyDisplayName(key), SERVICE_KEY_ALIAS, JSON.stringify(SERVICE_KEY_METADATA), new Date(now)],
  );
  const stored = await findKey(db, token);
  if (stored === null) throw new Error("the chat service key vanished right after it was ensured");
  const status = keyStatus(stored, now);
  let state: ServiceKeyState;
  if (inserted.rowCount === 1) state = "created";
  else if (status !== "active") state = status;
  else state = stored.metadata.user_headers === true ? "exists" : "cannot-name-users";
  const logged = { keyAlias: stored.keyAlias, keyHash: token.slice(0, 12), state };
  if (state === "created" || state === "exists")
    log.info(logged, "chat service key ready (CHAT_SERVICE_KEY)");
  else {
    log.warn(
      logged,
      `chat service key is ${state}: chat calls are ${state === "cannot-name-users" ? "not booked on their users" : "refused"}; set a new CHAT_SERVICE_KEY (the stack generates one when the old value is removed) and restart`,
    );
  }
  return state;
}
