/**
 * Audit rows for what a deletion takes with it (`/team/delete`, `/user/delete`): each key it revokes
 * (`key.delete`, as `/key/delete` writes) and each team membership it ends (`team.member_delete`, as
 * `/team/member_delete` writes), in the deletion's transaction, so that the audit log filtered by a key, a user
 * or a team shows how it went.
 */
import { type AuditActor, appendChange } from "../../audit/record.js";
import type { Queryable } from "../../db/transaction.js";
import { type KeyRecord, presentKey } from "../../keys/records.js";
import { presentMembership } from "../../teams/records.js";
import type { MemberView } from "../../teams/repository.js";

/**
 * One `key.delete` row per key revoked now (`revoked`, as `revokeKeys` returned them), with its state `before`
 * (keys found before revoking, by token); a key revoked earlier changed nothing and gets none.
 * @param now epoch ms.
 */
export async function auditRevokedKeys(
  db: Queryable,
  who: AuditActor,
  before: readonly KeyRecord[],
  revoked: readonly KeyRecord[],
  now: number,
): Promise<void> {
  const was = new Map(before.map((k) => [k.token, k]));
  for (const key of revoked) {
    const old = was.get(key.token);
    if (old === undefined || old.revokedAt !== null) continue;
    const target = { keyAlias: key.keyAlias, keyHash: key.token, userId: key.userId, teamId: key.teamId };
    const change = { before: presentKey(old, now), after: presentKey(key, now) };
    await appendChange(db, who, { action: "key.delete", target, ...change }, now);
  }
}

/** One `team.member_delete` row per membership in `ended` (read before the deletion). @param now epoch ms. */
export async function auditEndedMemberships(
  db: Queryable,
  who: AuditActor,
  ended: readonly MemberView[],
  now: number,
): Promise<void> {
  for (const { member, userEmail } of ended) {
    const target = { teamId: member.teamId, userId: member.userId };
    const before = presentMembership(member, userEmail, now);
    await appendChange(db, who, { action: "team.member_delete", target, before, after: null }, now);
  }
}
