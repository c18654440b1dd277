/**
 * Ownership of the Responses-API responses the gateway relays from native upstreams (OpenAI keeps a stored
 * response 30 days by default and lets anyone holding its organisation's key continue, read or delete it): the
 * gateway remembers who created each response id and which deployment served it, so that
 * `previous_response_id` and the stored-response routes (`GET`/`DELETE /v1/responses/{id}`, …) are answered
 * for the owner only, and sent to the deployment that holds the response.
 */
import type { AuthContext } from "../auth/types.js";

/** Who a relayed response belongs to. */
export interface ResponseOwner {
  /** SHA-256 hex of the virtual key that created it; null for the master key. */
  keyHash: string | null;
  /** The key's user (`user_id`), if any. */
  userId: string | null;
  /** Reserved for team ownership (teams are not modelled yet): always null today. */
  teamId: string | null;
}

/** What is remembered about one response id. */
export interface ResponseRecord {
  owner: ResponseOwner;
  /** The deployment that served it (`model_info.id`, `Deployment.id`). */
  deploymentId: string;
  /** Epoch ms after which the record is gone (the upstream's retention, {@link RESPONSE_RETENTION_MS}). */
  expiresAt: number;
}

/** How long a response's ownership is kept, ms: OpenAI keeps stored responses 30 days by default. */
export const RESPONSE_RETENTION_MS = 30 * 24 * 60 * 60_000;

/** Longest response id remembered, characters (OpenAI's are ~50); a longer one is never recorded. */
export const MAX_RESPONSE_ID_CHARS = 256;

/** The ownership registry, shared by every gateway instance when it is backed by Postgres. */
export interface ResponseOwners {
  /**
   * Remembers `responseId` as `owner`'s, served by `deploymentId`. Returns at once: the record is visible to
   * {@link lookup} on this instance immediately, and written to the shared table in the background.
   */
  record(responseId: string, owner: ResponseOwner, deploymentId: string): void;
  /**
   * The record of `responseId`, or undefined when none is kept (unknown, expired, or never relayed here).
   * @throws GatewayError 503 when the shared table cannot be read and the id is not cached.
   */
  lookup(responseId: string): Promise<ResponseRecord | undefined>;
  /** Writes what is queued and stops the background work. */
  close(): Promise<void>;
}

/** The owner a call by `auth` gives to the responses it creates. */
export function ownerOf(auth: AuthContext): ResponseOwner {
  if (auth.kind === "master") return { keyHash: null, userId: null, teamId: null };
  return { keyHash: auth.keyHash, userId: auth.userId, teamId: null };
}

/**
 * Whether `auth` may use (continue, read, delete, cancel) the response `record` describes: the master key may use
 * any; a virtual key only those created with the same key.
 */
export function mayUse(auth: AuthContext, record: ResponseRecord | undefined): record is ResponseRecord {
  if (record === undefined) return false;
  return auth.kind === "master" || record.owner.keyHash === auth.keyHash;
}
