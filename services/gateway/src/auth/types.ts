/**
 * Who is calling. The auth hook resolves `Authorization: Bearer <key>` into an {@link AuthContext};
 * the master key (GATEWAY_MASTER_KEY) becomes `{kind: "master"}`, a virtual key (made with /key/generate)
 * becomes `{kind: "virtual"}` carrying everything the limits need, so the hot path does no extra lookups.
 */
import type { LimitSubject } from "../limits/types.js";

export interface MasterAuth {
  kind: "master";
}

export interface VirtualKeyAuth {
  kind: "virtual";
  /** SHA-256 hex of the key: the only form stored or logged. */
  keyHash: string;
  keyAlias: string | null;
  /** The key's owner, if any. */
  userId: string | null;
  /** Model aliases the key may call; empty means all. */
  models: string[];
  /** Expiry as epoch ms, or null for never. */
  expiresAt: number | null;
  /** Budgets and rate limits to enforce: the key's, then its user's (when the key has a user). */
  subjects: LimitSubject[];
  /** The key's `metadata` (set with the master key); `metadata.guardrails` overrides guardrail modes per key. */
  metadata?: Readonly<Record<string, unknown>>;
}

export type AuthContext = MasterAuth | VirtualKeyAuth;

/**
 * Resolves virtual keys. Implemented by the key store (DATABASE_URL set); absent otherwise, in which case only
 * the master key is accepted.
 */
export interface KeyAuthenticator {
  /**
   * Looks up a presented key (the full `sk-…` string).
   * @returns the caller's context, or null when no such key exists.
   * @throws GatewayError 401 `expired_key` when expired, 401 when revoked; never for a database outage on a
   *   key it has seen before (it serves the last known record).
   */
  authenticate(presentedKey: string): Promise<VirtualKeyAuth | null>;
}
