/**
 * Virtual keys as stored in the `keys` table (only the SHA-256 hex of a key is stored) and their wire form.
 */
import type { ObjectPermission } from "../auth/types.js";
import {
  epochOrNull,
  LIMIT_COLUMNS,
  type LimitFields,
  limitsFromRow,
  presentLimits,
  type Row,
  stringOrNull,
  toIso,
} from "../users/records.js";

export interface KeyRecord extends LimitFields {
  /** SHA-256 hex of the key. */
  token: string;
  /** `sk-…abcd`. */
  keyName: string;
  keyAlias: string | null;
  userId: string | null;
  /** The team the key belongs to (a team key is bound by the team's limits, not its owner's), or null. */
  teamId: string | null;
  /** Model aliases the key may call; empty = all. */
  models: string[];
  metadata: Record<string, unknown>;
  /** LiteLLM's `object_permission` (MCP servers and tools the key may reach); null or absent: none granted. */
  objectPermission?: ObjectPermission | null;
  /** Epoch ms, or null for never. */
  expires: number | null;
  createdAt: number;
  updatedAt: number;
  /** Refused (401 `key_blocked`) until `/key/unblock`; unlike revocation, not final. */
  blocked: boolean;
  /** Epoch ms of revocation (terminal), or null. */
  revokedAt: number | null;
  /**
   * Epoch ms of the start of the key's newest booked request, null if never used; only read by key lists
   * (undefined elsewhere). Lags a call by the spend writer's flush interval.
   */
  lastUsedAt?: number | null;
}

/** `active`, or one of the terminal states. */
export type KeyStatus = "active" | "revoked" | "expired";

/** The `keys` columns, in the order {@link keyFromRow} reads them. */
export const KEY_COLUMNS = [
  "token",
  "key_name",
  "key_alias",
  "user_id",
  "team_id",
  "models",
  ...LIMIT_COLUMNS,
  "metadata",
  "object_permission",
  "expires",
  "created_at",
  "updated_at",
  "revoked_at",
  "blocked",
] as const;

/** Maps a `keys` row. */
export function keyFromRow(row: Row): KeyRecord {
  return {
    ...limitsFromRow(row),
    token: String(row.token),
    keyName: String(row.key_name),
    keyAlias: stringOrNull(row.key_alias),
    userId: stringOrNull(row.user_id),
    teamId: stringOrNull(row.team_id),
    models: Array.isArray(row.models) ? (row.models as string[]) : [],
    metadata: (row.metadata as Record<string, unknown> | null) ?? {},
    objectPermission: (row.object_permission as ObjectPermission | null | undefined) ?? null,
    expires: epochOrNull(row.expires),
    createdAt: epochOrNull(row.created_at) ?? 0,
    updatedAt: epochOrNull(row.updated_at) ?? 0,
    revokedAt: epochOrNull(row.revoked_at),
    blocked: row.blocked === true,
    ...("last_used_at" in row ? { lastUsedAt: epochOrNull(row.last_used_at) } : {}),
  };
}

/** The key's state at `now` (epoch ms). Revoked wins over expired; both are terminal. */
export function keyStatus(key: Pick<KeyRecord, "revokedAt" | "expires">, now: number): KeyStatus {
  if (key.revokedAt !== null) return "revoked";
  if (key.expires !== null && key.expires <= now) return "expired";
  return "active";
}

/**
 * A key on the wire (LiteLLM's `LiteLLM_VerificationToken` fields we keep, plus `status`). Never the full key:
 * `token` is the hash, `key_name` the `sk-…abcd` display form.
 */
export function presentKey(key: KeyRecord, now: number) {
  return {
    token: key.token,
    key_name: key.keyName,
    key_alias: key.keyAlias,
    user_id: key.userId,
    team_id: key.teamId,
    models: key.models,
    ...presentLimits(key, now),
    metadata: key.metadata,
    object_permission: key.objectPermission ?? null,
    expires: toIso(key.expires),
    created_at: toIso(key.createdAt),
    updated_at: toIso(key.updatedAt),
    revoked_at: toIso(key.revokedAt),
    status: keyStatus(key, now),
    blocked: key.blocked,
    // OpenAI's name (project API keys); only where it was read (key lists).
    ...(key.lastUsedAt === undefined ? {} : { last_used_at: toIso(key.lastUsedAt) }),
  };
}
