/**
 * The Teams view's API against a real gateway (Postgres, Redis): operators create and limit teams; a team's
 * admin manages its members, member budgets and service keys and reads its spend; a member sees the team and
 * their own share; and every team route answers 403 to a session without the role in that team (an admin of
 * one team reaching another, a member reaching an admin route, a team admin reaching an operator route).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsoleStack,
  chatVisitor,
  startConsoleStack,
  type Visitor,
  waitUntilKeyRefused,
} from "../../helpers/console.js";
import { waitFor } from "../../helpers/redis.js";

let stack: ConsoleStack;
let operator: Visitor; // the first registered chat account: ADMIN
let lead: Visitor; // admin of team A
let mate: Visitor; // member of team A
let other: Visitor; // admin of team B
let stranger: Visitor; // in no team
let mateId: string;
let leadId: string;
let teamA: string;
let teamB: string;
let keyOfB: string;

interface Team {
  team_id: string;
  team_alias: string;
  max_budget: number | null;
  blocked: boolean;
}

async function createTeam(body: Record<string, unknown>): Promise<Team> {
  const res = await operator.request<Team>("POST", "/api/teams", { body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

beforeAll(async () => {
  stack = await startConsoleStack();
  operator = (await chatVisitor(stack, "ops@example.com")).visitor;
  ({ visitor: lead, userId: leadId } = await chatVisitor(stack, "lead@example.com"));
  ({ visitor: mate, userId: mateId } = await chatVisitor(stack, "mate@example.com"));
  other = (await chatVisitor(stack, "other@example.com")).visitor;
  stranger = (await chatVisitor(stack, "stranger@example.com")).visitor;
  teamA = (
    await createTeam({
      team_alias: "search",
      max_budget: 50,
      budget_duration: "30d",
      admin_email: "lead@example.com",
    })
  ).team_id;
  teamB = (await createTeam({ team_alias: "billing", rpm_limit: 100, admin_email: "OTHER@example.com" }))
    .team_id;
  const b = await other.request<{ token: string }>("POST", `/api/teams/${teamB}/keys`, {
    body: { name: "billing-svc" },
  });
  expect(b.status, b.text).toBe(201);
  keyOfB = b.body.token;
  const added = await lead.request("POST", `/api/teams/${teamA}/members`, {
    body: { user_email: "mate@example.com", max_budget_in_team: 5 },
  });
  expect(added.status, added.text).toBe(201);
});
afterAll(async () => {
  await stack?.close();
});

/** Every team route, as [method, path, body] for team `id` (key and member of that team where needed). */
function routes(id: string, userId: string, token: string) {
  return {
    operator: [
      ["POST", `/api/teams/${id}`, { max_budget: 1000 }],
      ["POST", `/api/teams/${id}/block`, undefined],
      ["POST", `/api/teams/${id}/unblock`, undefined],
      ["DELETE", `/api/teams/${id}`, undefined],
    ],
    admin: [
      ["GET", `/api/teams/${id}/spend?days=7`, undefined],
      ["POST", `/api/teams/${id}/members`, { user_email: "stranger@example.com" }],
      ["POST", `/api/teams/${id}/members/${userId}`, { max_budget_in_team: 1000 }],
      ["DELETE", `/api/teams/${id}/members/${userId}`, undefined],
      ["POST", `/api/teams/${id}/keys`, { name: "sneaky" }],
      ["DELETE", `/api/teams/${id}/keys/${token}`, undefined],
    ],
    member: [["GET", `/api/teams/${id}`, undefined]],
  } as const;
}

async function expectRefused(visitor: Visitor, list: ReadonlyArray<readonly [string, string, unknown]>) {
  for (const [method, path, body] of list) {
    const res = await visitor.request(method, path, body === undefined ? {} : { body });
    expect(res.status, `${method} ${path}: ${res.text}`).toBe(403);
    expect(res.body).toMatchObject({ error: { type: "permission_error" } });
  }
}

describe("who may do what (403 for every route without the role)", () => {
  it("the admin of team B can neither read nor change team A, nor team A's admin team B", async () => {
    const a = routes(teamA, mateId, keyOfB);
    await expectRefused(other, [...a.member, ...a.admin, ...a.operator]);
    const b = routes(teamB, leadId, keyOfB);
    await expectRefused(lead, [...b.member, ...b.admin, ...b.operator]);
    // Nothing changed: B's key is live, mate is still in A with their budget, A is not blocked.
    expect((await stack.admin.keyInfo(keyOfB)).info.status).toBe("active");
    const info = await stack.admin.teamInfo(teamA);
    expect(info.team_info.blocked).toBe(false);
    expect(info.team_memberships.find((m) => m.user_id === mateId)?.max_budget_in_team).toBe(5);
    expect(info.keys).toHaveLength(0);
  });

  it("a member cannot reach the admin routes, a team admin not the operator's, a stranger nothing", async () => {
    const a = routes(teamA, mateId, keyOfB);
    await expectRefused(mate, [...a.admin, ...a.operator]);
    await expectRefused(lead, a.operator);
    await expectRefused(stranger, [...a.member, ...a.admin, ...a.operator]);
    const create = await lead.request("POST", "/api/teams", { body: { team_alias: "mine" } });
    expect(create.status).toBe(403);
    // An unknown team looks the same as someone else's to a non-operator; the operator gets a 404.
    expect((await lead.request("GET", "/api/teams/no-such-team")).status).toBe(403);
    expect((await operator.request("GET", "/api/teams/no-such-team")).status).toBe(404);
  });

  it("lists each session its own teams with its role; the operator every team", async () => {
    const mine = async (v: Visitor) =>
      (await v.request<{ teams: Array<{ team_id: string; access: string }> }>("GET", "/api/teams")).body
        .teams;
    expect(await mine(mate)).toEqual([expect.objectContaining({ team_id: teamA, access: "user" })]);
    expect(await mine(lead)).toEqual([expect.objectContaining({ team_id: teamA, access: "admin" })]);
    expect(await mine(stranger)).toEqual([]);
    expect((await mine(operator)).map((t) => t.team_id).sort()).toEqual([teamA, teamB].sort());
  });
});

describe("a team admin's work", () => {
  it("adds members by a console user's e-mail only, once, with valid budgets", async () => {
    const unknown = await lead.request("POST", `/api/teams/${teamA}/members`, {
      body: { user_email: "nobody@example.com" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: { param: "user_email" } });
    const twice = await lead.request("POST", `/api/teams/${teamA}/members`, {
      body: { user_email: "mate@example.com" },
    });
    expect(twice.body).toMatchObject({ error: { param: "user_email" } });
    const bad = await lead.request("POST", `/api/teams/${teamA}/members`, {
      body: { user_email: "stranger@example.com", max_budget_in_team: -3 },
    });
    expect(bad.body).toMatchObject({ error: { param: "max_budget_in_team" } });
    const changed = await lead.request("POST", `/api/teams/${teamA}/members/${mateId}`, {
      body: { max_budget_in_team: 7.5 },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(
      (await stack.admin.teamInfo(teamA)).team_memberships.find((m) => m.user_id === mateId),
    ).toMatchObject({
      max_budget_in_team: 7.5,
      role: "user",
    });
  });

  it("makes a team key shown once, sees its calls by member, key and model, and revokes it", async () => {
    const res = await lead.request<{ key: string; token: string }>("POST", `/api/teams/${teamA}/keys`, {
      body: { name: "indexer", rpm_limit: 30 },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const { key, token } = res.body;
    expect((await stack.admin.keyInfo(token)).info).toMatchObject({ team_id: teamA, user_id: null });
    const detail = await lead.request<{ keys: Array<{ token: string }>; members: unknown[] }>(
      "GET",
      `/api/teams/${teamA}`,
    );
    expect(detail.body.keys.map((k) => k.token)).toEqual([token]);
    expect(detail.body.members).toHaveLength(2);
    expect(detail.text).not.toContain(key);

    const client = stack.gateway.clientWith(key);
    await client.chat.completions.create({
      model: "fast",
      messages: [{ role: "user", content: "index this" }],
    });
    type Spend = {
      totals: { requests: number; spend: number };
      by_member: Array<{ user_id: string | null; requests: number }>;
      by_key: Array<{ api_key: string; key_alias: string; requests: number }>;
      by_model: Array<{ model: string; requests: number }>;
    };
    let spend = {} as Spend;
    await waitFor("the team key's call in the team's spend", async () => {
      spend = (await lead.request<Spend>("GET", `/api/teams/${teamA}/spend?days=7`)).body;
      return spend.totals.requests === 1 && spend.by_model.length === 1;
    });
    expect(spend.totals.spend).toBeGreaterThan(0);
    expect(spend.by_key).toEqual([
      expect.objectContaining({ api_key: token, key_alias: "indexer", requests: 1 }),
    ]);
    expect(spend.by_model).toEqual([expect.objectContaining({ model: "fast", requests: 1 })]);
    // The service key (no user) first, then both members with nothing spent.
    expect(spend.by_member.map((m) => [m.user_id, m.requests])).toEqual([
      [null, 1],
      expect.anything(),
      expect.anything(),
    ]);
    expect(spend.by_member.map((m) => m.user_id)).toEqual(expect.arrayContaining([leadId, mateId]));

    expect((await lead.request("DELETE", `/api/teams/${teamA}/keys/${keyOfB}`)).status).toBe(404);
    expect((await lead.request("DELETE", `/api/teams/${teamA}/keys/${token}`)).status).toBe(200);
    await waitUntilKeyRefused(client);
    expect(lead.seen.slice(1).join("\n")).toContain(key);
    expect(stack.logs.join("\n")).not.toContain(key);
  });

  it("a member sees the team and their own share, not the others' memberships or the keys", async () => {
    const res = await mate.request<Record<string, unknown>>("GET", `/api/teams/${teamA}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      access: "user",
      team: { team_id: teamA, team_alias: "search", max_budget: 50 },
      membership: { user_id: mateId, max_budget_in_team: 7.5, spend: 0 },
      members: null,
      keys: null,
    });
    expect(res.text).not.toContain("lead@example.com");
  });

  it("removes a member, who then no longer reaches the team", async () => {
    await lead.request("POST", `/api/teams/${teamA}/members`, {
      body: { user_email: "stranger@example.com" },
    });
    expect((await stranger.request("GET", `/api/teams/${teamA}`)).status).toBe(200);
    const strangerId = (await stranger.me()).body.user_id as string;
    expect((await lead.request("DELETE", `/api/teams/${teamA}/members/${strangerId}`)).status).toBe(200);
    expect((await stranger.request("GET", `/api/teams/${teamA}`)).status).toBe(403);
  });
});

describe("the operator's work", () => {
  it("changes limits (refusing a period without a budget), blocks, unblocks and deletes a team", async () => {
    const bad = await operator.request("POST", `/api/teams/${teamB}`, { body: { budget_duration: "30d" } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { param: "budget_duration" } });
    const noName = await operator.request("POST", "/api/teams", { body: { team_alias: " " } });
    expect(noName.body).toMatchObject({ error: { param: "team_alias" } });
    const changed = await operator.request<Team>("POST", `/api/teams/${teamB}`, {
      body: { max_budget: 20, budget_duration: "1mo", models: ["general"] },
    });
    expect(changed.body).toMatchObject({ max_budget: 20, budget_duration: "1mo", models: ["general"] });
    expect((await operator.request<Team>("POST", `/api/teams/${teamB}/block`)).body.blocked).toBe(true);
    expect((await stack.admin.teamInfo(teamB)).team_info.blocked).toBe(true);
    expect((await operator.request<Team>("POST", `/api/teams/${teamB}/unblock`)).body.blocked).toBe(false);
    const deleted = await operator.request("DELETE", `/api/teams/${teamB}`);
    expect(deleted.body).toMatchObject({ deleted_teams: [teamB], deleted_keys: [keyOfB] });
    expect((await other.request("GET", "/api/teams")).body).toEqual({ teams: [] });
  });
});
