/**
 * Cross-instance change messages. When a key is revoked or updated, or a user's limits change, the instance
 * that made the change publishes the new state and every instance applies it to its cached copy. The message
 * carries the state itself (the key or user row as it is after the change), so an instance that cannot reach
 * Postgres still refuses a revoked key and enforces a lowered budget at once; revocation is visible on every
 * instance within the pub/sub delivery time.
 */
import type { KeyRecord } from "../keys/records.js";
import type { MembershipRecord, TeamRecord } from "../teams/records.js";
import type { UserRecord } from "../users/records.js";

/**
 * The state of one key after a change (revocation included), of one user after a change of limits (it
 * applies to every cached key of that user), of one team (limits, models, `blocked`: every cached key of the
 * team), or of one membership (`deleted` when the user left the team: the keys of that user in that team).
 * Records as the repositories return them: epoch ms, USD.
 * `deployment`: a deployment (`model_info.id`) answered past the output cap it was sent and is treated as
 * ignoring caps until `until` (epoch ms; `router/cap-ignorers.ts`).
 */
export type InvalidationMessage =
  | { kind: "key"; key: KeyRecord }
  | { kind: "user"; user: UserRecord }
  | { kind: "deployment"; deploymentId: string; until: number }
  | { kind: "team"; team: TeamRecord }
  | { kind: "member"; member: MembershipRecord; deleted: boolean };

export interface InvalidationBus {
  /** Sends a message to every instance, this one included. Never throws; a lost message is covered by cache TTLs. */
  publish(message: InvalidationMessage): Promise<void>;
  /** Registers a handler called for every message, from any instance. */
  subscribe(handler: (message: InvalidationMessage) => void): void;
  /**
   * Since when (performance.now(), ms) this bus has without a break been able to receive every instance's
   * messages: the moment its subscription last became active. Undefined while it cannot (the subscriber link
   * is down, reconnecting or not yet subscribed; or an in-process bus in one of several processes). A cached
   * record read at or after this moment is kept current by the messages alone; one read before may have
   * missed a message (see `cache/freshness.ts`).
   */
  deliveringSince(): number | undefined;
  /**
   * Resolves true once every message any instance published before this call has been delivered to this
   * instance's handlers; false when that cannot be said (not delivering, or the link did not answer within
   * a second). Never rejects. Costs no database query (Redis: one PING on the subscriber link, shared).
   */
  caughtUp(): Promise<boolean>;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isTime = (value: unknown) => typeof value === "number" && Number.isFinite(value);

/**
 * Checks the shape of a message read off the wire (JSON from another instance): the identifying field and
 * the fields the key cache compares (`updatedAt`, `revokedAt`), or a deployment's id and `until`. Returns the
 * message, or undefined.
 */
export function parseInvalidationMessage(value: unknown): InvalidationMessage | undefined {
  if (!isObject(value)) return undefined;
  if (value.kind === "key" && isObject(value.key)) {
    const key = value.key;
    const revokedOk = key.revokedAt === null || isTime(key.revokedAt);
    if (typeof key.token === "string" && isTime(key.updatedAt) && revokedOk && Array.isArray(key.models)) {
      return value as InvalidationMessage;
    }
  }
  if (value.kind === "user" && isObject(value.user)) {
    const user = value.user;
    if (typeof user.userId === "string" && isTime(user.updatedAt)) return value as InvalidationMessage;
  }
  if (value.kind === "deployment" && typeof value.deploymentId === "string" && isTime(value.until)) {
    return { kind: "deployment", deploymentId: value.deploymentId, until: value.until as number };
  }
  if (value.kind === "team" && isObject(value.team)) {
    const team = value.team;
    const shaped = typeof team.teamId === "string" && isTime(team.updatedAt) && Array.isArray(team.models);
    if (shaped && typeof team.blocked === "boolean") return value as InvalidationMessage;
  }
  if (value.kind === "member" && isObject(value.member) && typeof value.deleted === "boolean") {
    const member = value.member;
    const ids = typeof member.teamId === "string" && typeof member.userId === "string";
    if (ids && isTime(member.updatedAt)) return value as InvalidationMessage;
  }
  return undefined;
}
