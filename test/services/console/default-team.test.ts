/**
 * DEFAULT_TEAM_ID against a real gateway: a user the console provisions for the first time joins that team as a
 * member; a user who already existed is not added again (a team admin's removal sticks); a default team that
 * no longer exists does not stop anyone signing in (a warning is logged).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsoleStack,
  chatVisitor,
  JWT_REFRESH_SECRET,
  startConsoleStack,
  Visitor,
} from "../../helpers/console.js";

let stack: ConsoleStack;
const TEAM = "everyone";

beforeAll(async () => {
  stack = await startConsoleStack({ env: { DEFAULT_TEAM_ID: TEAM } });
  await stack.admin.newTeam({ team_id: TEAM, team_alias: "Everyone" });
  await chatVisitor(stack, "ops@example.com"); // the first account is ADMIN: the others are plain users
});
afterAll(async () => {
  await stack?.close();
});

const memberIds = async () => (await stack.admin.teamInfo(TEAM)).team_memberships.map((m) => m.user_id);

describe("a default team for newly provisioned users", () => {
  it("a new user joins it as a member and sees it; once removed, a new session does not add them back", async () => {
    const { visitor, userId } = await chatVisitor(stack, "newcomer@example.com");
    expect(await memberIds()).toContain(userId);
    const teams = await visitor.request<{ teams: Array<{ team_id: string; access: string }> }>(
      "GET",
      "/api/teams",
    );
    expect(teams.body.teams).toEqual([expect.objectContaining({ team_id: TEAM, access: "user" })]);

    await stack.admin.deleteTeamMember({ team_id: TEAM, user_id: userId });
    const { refreshToken } = await stack.mongo.signIn(userId, JWT_REFRESH_SECRET);
    const again = new Visitor(stack.url).withChatCookie(refreshToken);
    expect((await again.me()).status).toBe(200);
    expect(await memberIds()).not.toContain(userId);
  });

  it("a default team that is gone does not stop a sign-in", async () => {
    await stack.admin.deleteTeams([TEAM]);
    const { visitor } = await chatVisitor(stack, "late@example.com");
    const me = await visitor.me();
    expect(me.body).toMatchObject({ provisioning_error: null, account: { user_email: "late@example.com" } });
    expect(stack.logs.some((line) => line.includes("DEFAULT_TEAM_ID not joined"))).toBe(true);
  });
});
