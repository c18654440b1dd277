/**
 * What a cached key record amounts to at a moment: refused (revoked, expired, blocked, its team deleted or
 * blocked: 401s in LiteLLM's wording) or the caller's auth context, with the limit subjects that bind it (LiteLLM's
 * rule, docs/limits.md "Who is limited": a team key is bound by its own limits, its team's and its member's in
 * the team, not its owner's personal ones; any other key by its own and its user's).
 */
import type { VirtualKeyAuth } from "../auth/types.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { MembershipRecord, TeamRecord } from "../teams/records.js";
import { currentPeriod } from "../time/budget-period.js";
import { limitSubject, type UserRecord } from "../users/records.js";
import type { KeyRecord } from "./records.js";

/** A key and the records its limits come from, as the key cache holds them. */
export interface KeyParts {
  key: KeyRecord;
  user: UserRecord | null;
  /** The key's team (null for a key without one, or a team deleted since). */
  team: TeamRecord | null;
  /** The key's user's membership of the key's team, or null. */
  member: MembershipRecord | null;
}

/** 503 for an unknown key while the database is unreachable (the key may exist; we cannot tell). */
export function storeUnavailable(cause: unknown): GatewayError {
  return new GatewayError(
    503,
    "The key store (Postgres) is unreachable, so this key cannot be checked now. Try again shortly.",
    { type: "service_unavailable_error", code: "key_store_unreachable", cause },
  );
}

function revoked(): GatewayError {
  return new GatewayError(401, "This API key was revoked. Make a new key in the console.", {
    type: "authentication_error",
    code: "invalid_api_key",
  });
}

/** 401 for a blocked key (LiteLLM's /key/block; /key/unblock lets it in again). */
function keyBlocked(): GatewayError {
  return new GatewayError(
    401,
    "This API key is blocked; an administrator can unblock it with /key/unblock.",
    {
      type: "authentication_error",
      code: "key_blocked",
    },
  );
}

/** 401 for a key of a blocked team (LiteLLM refuses it at authentication: "Team=… is blocked"). */
function teamBlocked(team: TeamRecord): GatewayError {
  return new GatewayError(
    401,
    `Team=${team.teamAlias ?? team.teamId} is blocked; its keys are refused until an administrator calls /team/unblock.`,
    { type: "authentication_error", code: "team_blocked" },
  );
}

/** 401 for a key whose team was deleted (its keys are revoked with it; a cached copy may not know yet). */
function teamDeleted(): GatewayError {
  return new GatewayError(401, "This API key's team was deleted. Make a new key in the console.", {
    type: "authentication_error",
    code: "invalid_api_key",
  });
}

function expired(expires: number): GatewayError {
  return new GatewayError(
    401,
    `This API key expired at ${new Date(expires).toISOString()}. Make a new key in the console.`,
    { type: "expired_key", code: "expired_key" },
  );
}

/**
 * Refuses a key that cannot be used at `now` (epoch ms).
 * @throws GatewayError 401 when the key is revoked, expired, blocked, or its team was deleted or is blocked.
 */
export function refuseUnusable({ key, team }: KeyParts, now: number): void {
  if (key.revokedAt !== null) throw revoked();
  if (key.expires !== null && key.expires <= now) throw expired(key.expires);
  if (key.blocked) throw keyBlocked();
  if (key.teamId !== null && team === null) throw teamDeleted();
  if (team?.blocked) throw teamBlocked(team);
}

/**
 * The auth context of a usable key at `now` (epoch ms), and until when it holds (epoch ms: the first budget
 * period of its subjects to end; Infinity when none resets).
 */
export function keyAuth(
  { key, user, team, member }: KeyParts,
  now: number,
): { auth: VirtualKeyAuth; validUntil: number } {
  const subjects = [limitSubject("key", key.token, key, now, key.keyAlias)];
  const holders: Parameters<typeof currentPeriod>[0][] = [key];
  if (team !== null) {
    // A team key: its team's limits and its member's in the team; the owner's personal limits do not apply.
    subjects.push(limitSubject("team", team.teamId, team, now, team.teamAlias));
    holders.push(team);
    if (member !== null) {
      subjects.push(
        limitSubject("team_member", member.memberKey, member, now, user?.userEmail ?? member.userId),
      );
      holders.push(member);
    }
  } else if (user !== null) {
    subjects.push(limitSubject("user", user.userId, user, now));
    holders.push(user);
  }
  const resets = holders
    .map((limits) => currentPeriod(limits, now).budgetResetAt)
    .filter((reset): reset is number => reset !== null);
  const auth: VirtualKeyAuth = {
    kind: "virtual",
    keyHash: key.token,
    keyAlias: key.keyAlias,
    userId: key.userId,
    teamId: key.teamId,
    teamAlias: team?.teamAlias ?? null,
    teamModels: team?.models ?? [],
    models: key.models,
    expiresAt: key.expires,
    subjects,
    namesUsers: key.metadata.user_headers === true,
    metadata: key.metadata,
    ...(key.objectPermission == null ? {} : { objectPermission: key.objectPermission }),
    ...(team?.objectPermission == null ? {} : { teamObjectPermission: team.objectPermission }),
  };
  return { auth, validUntil: Math.min(Number.POSITIVE_INFINITY, ...resets) };
}
