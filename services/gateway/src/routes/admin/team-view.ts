/** What the team routes (`teams.ts`, `team-members.ts`) answer with: a team on the wire, and the 404 for none. */
import type { Queryable } from "../../db/transaction.js";
import { presentTeam, type TeamRecord } from "../../teams/records.js";
import { listMembers, membersWithRoles } from "../../teams/repository.js";
import { notFound } from "./validation.js";

/** 404 `not_found_error` naming `team_id`, for a team id nobody created (or one deleted). */
export function unknownTeam(teamId: string): ReturnType<typeof notFound> {
  return notFound(`No team with team_id "${teamId}".`, "team_id");
}

/** The team on the wire (`presentTeam`) with its `members_with_roles`, read in `db` at `now` (epoch ms). */
export async function teamView(db: Queryable, team: TeamRecord, now: number) {
  return presentTeam(team, membersWithRoles(await listMembers(db, [team.teamId]), team.teamId), now);
}
