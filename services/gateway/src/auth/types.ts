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
  /** The key's team, if any (`/key/generate` with `team_id`). */
  teamId?: string | null;
  /** The team's alias, if any. */
  teamAlias?: string | null;
  /** Model aliases the key may call; empty means all. */
  models: string[];
  /**
   * Model aliases the key's team may call (its `models`); empty or absent means all. A call (and every fallback
   * of its route plan) must be allowed by both lists.
   */
  teamModels?: string[];
  /** Expiry as epoch ms, or null for never. */
  expiresAt: number | null;
  /**
   * Budgets and rate limits to enforce: the key's, then its user's (when the key has a user); for a team key
   * the key's, the team's and the member's in the team (never the owner's personal ones).
   */
  subjects: LimitSubject[];
  /**
   * The key may name the user a chat call is for (`x-librechat-user-id`): its metadata has `user_headers: true`,
   * which only the master key can set (the chat's service key, CHAT_SERVICE_KEY, has it). False for every
   * other key, whose user headers are ignored.
   */
  namesUsers: boolean;
  /** The key's `metadata` (set with the master key); `metadata.guardrails` overrides guardrail modes per key. */
  metadata?: Readonly<Record<string, unknown>>;
  /** The key's `object_permission` (MCP servers and tools it may reach, `mcp/permissions.ts`); absent: none. */
  objectPermission?: ObjectPermission;
  /**
   * The `object_permission` of the key's team (LiteLLM's team grants), combined with the key's own by
   * `mcp/permissions.ts`; absent: the key has no team, or its team grants nothing.
   */
  teamObjectPermission?: ObjectPermission;
}

/**
 * LiteLLM's `object_permission` of a key or a team (`LiteLLM_ObjectPermissionTable`), the MCP part: the MCP servers the
 * key may reach (`mcp_servers`, by their config names) and, per server, the only tools it may use there
 * (`mcp_tool_permissions`; a server not in it: all its tools).
 */
export interface ObjectPermission {
  mcp_servers?: string[];
  mcp_tool_permissions?: Record<string, string[]>;
}

export type AuthContext = MasterAuth | VirtualKeyAuth;

/**
 * Books calls of a key that names users ({@link VirtualKeyAuth.namesUsers}) on the user its request names:
 * implemented by `users/attribution.ts` over the store's user directory.
 */
export interface UserAttributor {
  /**
   * @param auth a key with `namesUsers` set.
   * @param headers the request's headers (`x-librechat-user-id`, `x-librechat-user-email`).
   * @returns the key's context with `userId` the named user (provisioned if new) and `subjects` the key's own
   *   limits plus that user's.
   * @throws GatewayError 400 naming the header for a missing or malformed value; 503 when the user is not
   *   cached and the database does not answer.
   */
  attribute(
    auth: VirtualKeyAuth,
    headers: Readonly<Record<string, string | string[] | undefined>>,
  ): Promise<VirtualKeyAuth>;
}

/**
 * Resolves virtual keys. Implemented by the key store (DATABASE_URL set); absent otherwise, in which case only
 * the master key is accepted.
 */
export interface KeyAuthenticator {
  /**
   * Looks up a presented key (the full `sk-…` string).
   * @param keyHash the key's SHA-256 hex, when the caller has computed it already (it is not hashed again).
   * @returns the caller's context, or null when no such key exists.
   * @throws GatewayError 401 `expired_key` when expired, 401 when revoked; never for a database outage on a
   *   key it has seen before (it serves the last known record).
   */
  authenticate(presentedKey: string, keyHash?: string): Promise<VirtualKeyAuth | null>;
  /**
   * The same answer, for a caller whose source is over its authentication-failure limit: a key known to this
   * instance (cached, or remembered as unknown) is answered without a lookup, another is looked up only when a
   * key with its hash may exist (`keys/known-keys.ts`), so bogus keys cost no database query; undefined when
   * none may (the caller refuses it with 429). Optional: an authenticator without it has every key of a
   * blocked source refused.
   */
  authenticateWhileLimited?(
    presentedKey: string,
    keyHash?: string,
  ): Promise<VirtualKeyAuth | null | undefined>;
}
