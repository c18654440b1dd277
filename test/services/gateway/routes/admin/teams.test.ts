/**
 * The team API (LiteLLM's /team/* shapes) on a real Postgres: create, info, list, update, members (by id and
 * email, with a budget in the team), block/unblock refusing the team's keys, delete revoking them; team keys
 * from /key/generate (an unknown team, a non-member user or models outside the team's are 400); every write
 * audited. Answers are checked against the response schemas of @platform/admin-api.
 */
import {
  AUDIT_ACTIONS,
  deleteTeamsResponse,
  generateKeyResponse,
  listTeamsResponse,
  teamInfoResponse,
  teamMemberAddResponse,
  teamMemberUpdateResponse,
  teamRecord,
} from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../../../../services/gateway/src/store/index.js";
import { createTestDatabase, type TestDatabase } from "../../../../helpers/postgres.js";
import { adminApp, call, openStore } from "../../store/harness.js";

let db: TestDatabase;
let store: Store;
let app: FastifyInstance;

beforeAll(async () => {
  db = await createTestDatabase();
  const opened = await openStore(db.url);
  store = opened.store;
  app = await adminApp(opened);
});

afterAll(async () => {
  await app?.close();
  await store?.close();
  await db?.drop();
});

async function newTeam(body: Record<string, unknown>) {
  const res = await call(app, "POST", "/team/new", body);
  expect(res.status).toBe(200);
  return teamRecord.parse(res.body);
}

describe("/team/new, /team/info, /team/list, /team/update", () => {
  it("creates a team with its admin (a new user), shows it with its keys and memberships, and changes it", async () => {
    const team = await newTeam({
      team_id: "ml",
      team_alias: "ML platform",
      max_budget: 100,
      budget_duration: "30d",
      tpm_limit: 50_000,
      rpm_limit: 600,
      max_parallel_requests: 4,
      models: ["general"],
      members_with_roles: [{ role: "admin", user_id: "lead" }],
      metadata: { cost_center: "CC-1" },
    });
    expect(team).toMatchObject({
      team_id: "ml",
      team_alias: "ML platform",
      max_budget: 100,
      budget_duration: "30d",
      spend: 0,
      max_parallel_requests: 4,
      models: ["general"],
      blocked: false,
      members_with_roles: [{ role: "admin", user_id: "lead", user_email: null }],
      admins: ["lead"],
      members: ["lead"],
    });
    expect(team.budget_reset_at).not.toBeNull();
    expect((await call(app, "GET", "/user/info?user_id=lead")).status).toBe(200);

    const again = await call(app, "POST", "/team/new", { team_id: "ml" });
    expect(again.status).toBe(400);
    expect(again.body.error.param).toBe("team_id");

    const key = await call(app, "POST", "/key/generate", {
      team_id: "ml",
      user_id: "lead",
      key_alias: "svc",
    });
    expect(key.status).toBe(200);
    expect(generateKeyResponse.parse(key.body).team_id).toBe("ml");

    const info = await call(app, "GET", "/team/info?team_id=ml");
    expect(info.status).toBe(200);
    const parsed = teamInfoResponse.parse(info.body);
    expect(parsed.team_info.team_alias).toBe("ML platform");
    expect(parsed.keys.map((k) => k.token)).toEqual([key.body.token]);
    expect(parsed.team_memberships).toMatchObject([{ user_id: "lead", role: "admin", spend: 0 }]);

    const updated = await call(app, "POST", "/team/update", {
      team_id: "ml",
      max_budget: 50,
      models: null,
      max_parallel_requests: 2,
    });
    expect(updated.status).toBe(200);
    expect(teamRecord.parse(updated.body)).toMatchObject({
      max_budget: 50,
      models: [],
      rpm_limit: 600,
      max_parallel_requests: 2,
    });

    await newTeam({ team_id: "web", team_alias: "Web" });
    const list = await call(app, "GET", "/team/list");
    expect(
      listTeamsResponse
        .parse(list.body)
        .map((t) => t.team_id)
        .sort(),
    ).toEqual(["ml", "web"]);
    const mine = await call(app, "GET", "/team/list?user_id=lead");
    expect(listTeamsResponse.parse(mine.body).map((t) => t.team_id)).toEqual(["ml"]);

    const missing = await call(app, "GET", "/team/info?team_id=nope");
    expect(missing.status).toBe(404);
    expect(missing.body.error.param).toBe("team_id");
  });
});

describe("/team/member_add, /team/member_update, /team/member_delete", () => {
  it("adds members by id and e-mail with a budget in the team, updates and removes them", async () => {
    await newTeam({ team_id: "ops", budget_duration: "1d" });
    await call(app, "POST", "/user/new", { user_id: "ann", user_email: "ann@example.com" });
    const added = await call(app, "POST", "/team/member_add", {
      team_id: "ops",
      member: [
        { role: "user", user_email: "ANN@example.com" },
        { role: "user", user_email: "bob@example.com" },
      ],
      max_budget_in_team: 2.5,
    });
    expect(added.status).toBe(200);
    const body = teamMemberAddResponse.parse(added.body);
    expect(body.updated_users[0]?.user_id).toBe("ann");
    expect(body.updated_team_memberships).toMatchObject([
      {
        user_id: "ann",
        max_budget_in_team: 2.5,
        litellm_budget_table: { max_budget: 2.5, budget_duration: "1d" },
      },
      { user_email: "bob@example.com", max_budget_in_team: 2.5 },
    ]);
    expect(body.members_with_roles).toHaveLength(2);

    const twice = await call(app, "POST", "/team/member_add", { team_id: "ops", member: { user_id: "ann" } });
    expect(twice.status).toBe(400);
    expect(twice.body.error.param).toBe("member");

    const update = await call(app, "POST", "/team/member_update", {
      team_id: "ops",
      user_id: "ann",
      role: "admin",
      max_budget_in_team: 4,
    });
    expect(update.status).toBe(200);
    expect(teamMemberUpdateResponse.parse(update.body)).toMatchObject({
      team_id: "ops",
      user_id: "ann",
      role: "admin",
      max_budget_in_team: 4,
    });

    const removed = await call(app, "POST", "/team/member_delete", {
      team_id: "ops",
      user_email: "bob@example.com",
    });
    expect(removed.status).toBe(200);
    expect(teamRecord.parse(removed.body).members).toEqual(["ann"]);
    const gone = await call(app, "POST", "/team/member_delete", {
      team_id: "ops",
      user_email: "bob@example.com",
    });
    expect(gone.status).toBe(404);

    const noTeam = await call(app, "POST", "/team/member_add", {
      team_id: "nope",
      member: { user_id: "ann" },
    });
    expect(noTeam.status).toBe(404);
    const noWho = await call(app, "POST", "/team/member_add", { team_id: "ops", member: { role: "user" } });
    expect(noWho.status).toBe(400);
  });
});

describe("team keys", () => {
  it("refuses /key/generate for an unknown team, a user outside the team, or models outside the team's", async () => {
    await newTeam({ team_id: "narrow", models: ["general"] });
    await call(app, "POST", "/user/new", { user_id: "outsider" });
    const cases: [Record<string, unknown>, string][] = [
      [{ team_id: "no-such-team" }, "team_id"],
      [{ team_id: "narrow", user_id: "outsider" }, "user_id"],
      [{ team_id: "narrow", models: ["general", "premium"] }, "models"],
    ];
    for (const [body, param] of cases) {
      const res = await call(app, "POST", "/key/generate", body);
      expect(res.status).toBe(400);
      expect(res.body.error.type).toBe("invalid_request_error");
      expect(res.body.error.param).toBe(param);
    }
    const { body: list } = await call(app, "GET", "/key/list?team_id=narrow");
    expect(list.total_count).toBe(0);
  });

  it("refuses a team_id on /key/update (a key's team is fixed when it is made) instead of ignoring it", async () => {
    await newTeam({ team_id: "fixed" });
    const made = await call(app, "POST", "/key/generate", {});
    for (const team_id of ["fixed", null]) {
      const res = await call(app, "POST", "/key/update", { key: made.body.key, team_id, key_alias: "moved" });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe("team_id");
    }
    const info = await call(app, "GET", `/key/info?key=${made.body.token}`);
    expect(info.body.info).toMatchObject({ team_id: null, key_alias: null });
  });

  it("a blocked team's keys are refused (401 team_blocked) until unblocked; deleting the team revokes them", async () => {
    await newTeam({ team_id: "blockme" });
    const made = await call(app, "POST", "/key/generate", { team_id: "blockme" });
    const key = made.body.key as string;
    // A virtual key reaches the admin API's master-key check: 403 while its team is in good standing.
    expect((await call(app, "GET", "/key/list", undefined, key)).status).toBe(403);

    const blocked = await call(app, "POST", "/team/block", { team_id: "blockme" });
    expect(teamRecord.parse(blocked.body).blocked).toBe(true);
    const refused = await call(app, "GET", "/key/list", undefined, key);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe("team_blocked");

    await call(app, "POST", "/team/unblock", { team_id: "blockme" });
    expect((await call(app, "GET", "/key/list", undefined, key)).status).toBe(403);

    const deleted = await call(app, "POST", "/team/delete", { team_ids: ["blockme"] });
    expect(deleted.status).toBe(200);
    expect(deleteTeamsResponse.parse(deleted.body)).toEqual({
      deleted_teams: ["blockme"],
      deleted_keys: [made.body.token],
    });
    expect((await call(app, "GET", "/key/list", undefined, key)).status).toBe(401);
    expect((await call(app, "GET", "/team/info?team_id=blockme")).status).toBe(404);
    expect((await call(app, "POST", "/team/delete", { team_ids: ["blockme"] })).status).toBe(404);
  });

  it("audits what deleting a team takes with it: each key it revokes and each membership it ends", async () => {
    await call(app, "POST", "/user/new", { user_id: "leaving-member" });
    await newTeam({ team_id: "gone", members_with_roles: [{ role: "user", user_id: "leaving-member" }] });
    const made = await call(app, "POST", "/key/generate", { team_id: "gone", user_id: "leaving-member" });
    expect((await call(app, "POST", "/team/delete", { team_ids: ["gone"] })).status).toBe(200);
    const { body } = await call(app, "GET", "/audit/logs?team_id=gone&page_size=100");
    const rows = body.logs as { action: string; key_hash_prefix: string | null; user_id: string | null }[];
    expect(rows.map((r) => r.action).sort()).toEqual([
      "key.delete",
      "key.generate",
      "team.delete",
      "team.member_add",
      "team.member_delete",
      "team.new",
    ]);
    expect(rows.find((r) => r.action === "key.delete")?.key_hash_prefix).toBe(made.body.token.slice(0, 12));
    expect(rows.find((r) => r.action === "team.member_delete")?.user_id).toBe("leaving-member");
  });

  it("audits every team write", async () => {
    const { body } = await call(app, "GET", "/audit/logs?page_size=100");
    const actions = new Set((body.logs as { action: string }[]).map((l) => l.action));
    for (const action of AUDIT_ACTIONS.filter((a) => a.startsWith("team."))) {
      expect(actions).toContain(action);
    }
  });
});
