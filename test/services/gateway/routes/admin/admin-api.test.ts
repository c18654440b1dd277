import { deleteUsersResponse, spendLogsResponse } from "@platform/admin-api";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../../../../services/gateway/src/store/index.js";
import { adminAppOnFreshDatabase, call, type ManualClock } from "../../store/harness.js";

const DAY = 86_400_000;

let store: Store;
let clock: ManualClock;
let app: FastifyInstance;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ store, clock, app, close } = await adminAppOnFreshDatabase());
});

afterAll(async () => {
  await close?.();
});

async function newUser(userId: string, extra: Record<string, unknown> = {}) {
  const res = await call(app, "POST", "/user/new", {
    user_id: userId,
    user_email: `${userId}@example.com`,
    ...extra,
  });
  expect(res.status).toBe(200);
  return res.body;
}

describe("admin API access", () => {
  it("refuses a request without the master key with 401", async () => {
    const res = await call(app, "GET", "/key/list", undefined, null);
    expect(res.status).toBe(401);
    expect(res.body.error.type).toBe("authentication_error");
  });

  it("refuses a virtual key with 403", async () => {
    await newUser("access-user");
    const made = await call(app, "POST", "/key/generate", { user_id: "access-user", key_alias: "a" });
    const res = await call(app, "POST", "/user/new", { user_id: "x" }, made.body.key);
    expect(res.status).toBe(403);
    expect(res.body.error.type).toBe("permission_error");
  });
});

describe("malformed admin bodies", () => {
  it.each([
    ["/key/generate", { max_budget: "ten" }, "max_budget"],
    ["/key/generate", { duration: "3 days" }, "duration"],
    ["/key/generate", { tpm_limit: -1 }, "tpm_limit"],
    ["/key/generate", { models: "general" }, "models"],
    ["/key/generate", { key: "sk-chosen-by-client-000000000" }, "key"],
    ["/key/update", { max_budget: 1 }, "key"],
    ["/key/delete", { keys: [] }, "keys"],
    ["/key/delete", {}, "keys"],
    ["/user/new", { user_role: "wizard" }, "user_role"],
    ["/user/new", { budget_duration: "monthly" }, "budget_duration"],
    ["/user/update", { max_budget: 5 }, "user_id"],
  ])("POST %s %j → 400 naming %s", async (url, body, field) => {
    const res = await call(app, "POST", url, body);
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe("invalid_request_error");
    expect(res.body.error.param).toBe(field);
    expect(res.body.error.message).toContain(field);
  });

  it("refuses bad query strings with 400 naming the field", async () => {
    const res = await call(app, "GET", "/key/list?size=1000");
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe("size");
    const usage = await call(app, "GET", "/spend/usage?days=30&user_id=u&api_key=k");
    expect(usage.status).toBe(400);
    expect(usage.body.error.param).toBe("user_id");
  });
});

describe("key lifecycle", () => {
  it("generate → info/list (never the full key) → update → delete → authentication refused", async () => {
    await newUser("life", { max_budget: 20, tpm_limit: 5000, rpm_limit: 50 });
    const made = await call(app, "POST", "/key/generate", {
      user_id: "life",
      key_alias: "laptop",
      models: ["general"],
      max_budget: 5,
      budget_duration: "1d",
      rpm_limit: 10,
      metadata: { team: "x" },
    });
    expect(made.status).toBe(200);
    const { key, token, key_name } = made.body;
    expect(key).toMatch(/^sk-[0-9A-Za-z]{40}$/);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(made.body.token_id).toBe(token);
    expect(key_name).toBe(`sk-…${key.slice(-4)}`);
    expect(made.body.expires).toBe(new Date(clock.now() + 90 * DAY).toISOString());
    expect(made.body).toMatchObject({
      key_alias: "laptop",
      user_id: "life",
      models: ["general"],
      max_budget: 5,
    });

    const info = await call(app, "GET", `/key/info?key=${encodeURIComponent(key)}`);
    expect(info.status).toBe(200);
    expect(info.body.info).toMatchObject({
      token,
      key_name,
      key_alias: "laptop",
      status: "active",
      spend: 0,
    });
    const byHash = await call(app, "GET", `/key/info?key=${token}`);
    expect(byHash.body.info.token).toBe(token);

    const list = await call(app, "GET", "/key/list?user_id=life&return_full_object=true");
    expect(list.body).toMatchObject({ total_count: 1, current_page: 1, total_pages: 1 });
    expect(list.body.keys[0].key_name).toBe(key_name);
    const short = await call(app, "GET", "/key/list?user_id=life");
    expect(short.body.keys).toEqual([token]);
    for (const body of [info.body, list.body, short.body]) expect(JSON.stringify(body)).not.toContain(key);

    const auth = await store.keys.authenticate(key);
    expect(auth).toMatchObject({ kind: "virtual", keyHash: token, userId: "life", models: ["general"] });
    expect(auth?.subjects.map((s) => [s.scope, s.id, s.maxBudget])).toEqual([
      ["key", token, 5],
      ["user", "life", 20],
    ]);

    const updated = await call(app, "POST", "/key/update", {
      key: token,
      max_budget: 8,
      key_alias: "desktop",
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ max_budget: 8, key_alias: "desktop", rpm_limit: 10 });
    expect((await store.keys.authenticate(key))?.subjects[0]?.maxBudget).toBe(8);

    const deleted = await call(app, "POST", "/key/delete", { keys: [key] });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted_keys: [token] });
    await expect(store.keys.authenticate(key)).rejects.toMatchObject({ status: 401 });

    const after = await call(app, "GET", `/key/info?key=${token}`);
    expect(after.body.info.status).toBe("revoked");
    expect((await call(app, "GET", "/key/list?user_id=life")).body.total_count).toBe(0);
    expect((await call(app, "GET", "/key/list?user_id=life&include_revoked=true")).body.total_count).toBe(1);
  });

  it("revoked and expired keys are terminal", async () => {
    await newUser("terminal");
    const revoked = await call(app, "POST", "/key/generate", { user_id: "terminal", key_alias: "r" });
    await call(app, "POST", "/key/delete", { keys: [revoked.body.token] });
    const res = await call(app, "POST", "/key/update", { key: revoked.body.token, max_budget: 1 });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/revoked.*terminal/);

    const short = await call(app, "POST", "/key/generate", {
      user_id: "terminal",
      key_alias: "e",
      duration: "30s",
    });
    clock.advance(31_000);
    const expired = await call(app, "POST", "/key/update", { key: short.body.token, duration: "30d" });
    expect(expired.status).toBe(400);
    expect(expired.body.error.message).toMatch(/expired.*terminal/);
    await expect(store.keys.authenticate(short.body.key)).rejects.toMatchObject({
      status: 401,
      type: "expired_key",
    });

    const unknown = await call(app, "POST", "/key/update", { key: "0".repeat(64), max_budget: 1 });
    expect(unknown.status).toBe(404);
  });

  it("refuses key limits looser than the user's, naming the limit and both values", async () => {
    await newUser("tight", { max_budget: 10, tpm_limit: 1000, rpm_limit: 20 });
    const budget = await call(app, "POST", "/key/generate", { user_id: "tight", max_budget: 50 });
    expect(budget.status).toBe(400);
    expect(budget.body.error.param).toBe("max_budget");
    expect(budget.body.error.message).toContain("50");
    expect(budget.body.error.message).toContain("10");
    const rpm = await call(app, "POST", "/key/generate", { user_id: "tight", rpm_limit: 21 });
    expect(rpm.body.error.param).toBe("rpm_limit");

    const ok = await call(app, "POST", "/key/generate", { user_id: "tight", tpm_limit: 1000 });
    expect(ok.status).toBe(200);
    const looser = await call(app, "POST", "/key/update", { key: ok.body.token, tpm_limit: 1001 });
    expect(looser.status).toBe(400);
    expect(looser.body.error.param).toBe("tpm_limit");
  });

  it("refuses an unknown user_id on /key/generate", async () => {
    const res = await call(app, "POST", "/key/generate", { user_id: "nobody" });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe("user_id");
  });

  it("allows an alias again once its key is revoked or expired, not while it is active", async () => {
    await newUser("alias");
    const first = await call(app, "POST", "/key/generate", {
      user_id: "alias",
      key_alias: "main",
      duration: "1h",
    });
    const clash = await call(app, "POST", "/key/generate", { user_id: "alias", key_alias: "main" });
    expect(clash.status).toBe(400);
    expect(clash.body.error.param).toBe("key_alias");
    // Another user may use the same name.
    await newUser("alias-2");
    expect((await call(app, "POST", "/key/generate", { user_id: "alias-2", key_alias: "main" })).status).toBe(
      200,
    );

    await call(app, "POST", "/key/delete", { keys: [first.body.token] });
    const second = await call(app, "POST", "/key/generate", {
      user_id: "alias",
      key_alias: "main",
      duration: "1h",
    });
    expect(second.status).toBe(200);
    clock.advance(2 * 3_600_000);
    const third = await call(app, "POST", "/key/generate", { user_id: "alias", key_alias: "main" });
    expect(third.status).toBe(200);
  });
});

describe("users", () => {
  it("provisions with the organisation defaults, idempotently", async () => {
    const first = await call(app, "POST", "/user/new", { user_id: "jit", user_email: "jit@example.com" });
    expect(first.body).toMatchObject({
      user_id: "jit",
      user_role: "internal_user",
      max_budget: 10,
      budget_duration: "30d",
      tpm_limit: 10_000,
      rpm_limit: 60,
      spend: 0,
      created: true,
    });
    await call(app, "POST", "/user/update", { user_id: "jit", max_budget: 25 });
    const again = await call(app, "POST", "/user/new", { user_id: "jit", max_budget: 1 });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ user_id: "jit", max_budget: 25, created: false });
  });

  it("shows a user with keys, updates and lists users", async () => {
    await newUser("info-user", { max_budget: null });
    await call(app, "POST", "/key/generate", { user_id: "info-user", key_alias: "k1" });
    const info = await call(app, "GET", "/user/info?user_id=info-user");
    expect(info.body.user_info).toMatchObject({ user_id: "info-user", max_budget: null });
    expect(info.body.keys).toHaveLength(1);
    expect((await call(app, "GET", "/user/info?user_id=missing")).status).toBe(404);
    const updated = await call(app, "POST", "/user/update", {
      user_id: "info-user",
      rpm_limit: 5,
      user_role: "proxy_admin",
    });
    expect(updated.body).toMatchObject({ rpm_limit: 5, user_role: "proxy_admin" });
    const list = await call(app, "GET", "/user/list?page=1&page_size=2");
    expect(list.body.users).toHaveLength(2);
    expect(list.body.total).toBeGreaterThanOrEqual(2);
    expect(list.body.total_pages).toBe(Math.ceil(list.body.total / 2));
  });
});

describe("spend logs and usage", () => {
  it("lists spend rows and aggregates per day (zero-filled), per model and per key", async () => {
    await newUser("usage", { budget_duration: null });
    const a = await call(app, "POST", "/key/generate", { user_id: "usage", key_alias: "a" });
    const b = await call(app, "POST", "/key/generate", { user_id: "usage", key_alias: "b" });
    const now = clock.now();
    // 80 of the 100 prompt tokens read from the prompt cache, 20 of the 50 output tokens reasoning.
    const cachedCall = {
      input: 20,
      input_audio: 0,
      cache_read: 80,
      cache_write_5m: 0,
      cache_write_1h: 0,
      output: 50,
      output_reasoning: 20,
      output_audio: 0,
      accepted_prediction: 0,
      rejected_prediction: 0,
      web_search_requests: 0,
    };
    const row = (
      key: { token: string; key_alias: string },
      daysAgo: number,
      model: string,
      spend: number,
    ) => ({
      requestId: `usage-${key.key_alias}-${daysAgo}-${model}`,
      keyHash: key.token,
      keyAlias: key.key_alias,
      userId: "usage",
      modelGroup: model,
      model: `openai/${model}`,
      deploymentId: null,
      promptTokens: 100,
      completionTokens: 50,
      totalTokens: 150,
      spend,
      startTime: now - daysAgo * DAY,
      endTime: now - daysAgo * DAY + 100,
      status: 200,
      stream: false,
    });
    store.spend.record({
      ...row(a.body, 0, "general", 0.5),
      deploymentId: "general-1",
      usageDetails: cachedCall,
    });
    store.spend.record(row(a.body, 2, "general", 0.25));
    store.spend.record(row(b.body, 2, "fast", 0.125));
    store.spend.record(row(b.body, 40, "fast", 1));
    // The upstream answered 502: counted in requests and, apart, in failed_requests.
    store.spend.record({ ...row(b.body, 40, "fast", 0), requestId: "usage-b-40-failed", status: 502 });
    await store.spend.flush();

    const usage = await call(app, "GET", "/spend/usage?user_id=usage&days=7");
    expect(usage.status).toBe(200);
    expect(usage.body.daily).toHaveLength(7);
    const today = new Date(now).toISOString().slice(0, 10);
    expect(usage.body.end_date).toBe(today);
    expect(usage.body.daily.at(-1)).toMatchObject({
      date: today,
      spend: 0.5,
      requests: 1,
      total_tokens: 150,
    });
    expect(usage.body.daily.at(-3)).toMatchObject({ spend: 0.375, requests: 2 });
    expect(usage.body.daily.at(-2)).toEqual({
      date: new Date(now - DAY).toISOString().slice(0, 10),
      spend: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      cached_tokens: 0,
      requests: 0,
      failed_requests: 0,
      refused_requests: 0,
      cache_hits: 0,
      cache_saved_spend: 0,
    });
    expect(usage.body.totals).toMatchObject({
      spend: 0.875,
      requests: 3,
      cached_tokens: 80,
      failed_requests: 0,
    });
    expect(usage.body.daily.at(-1).cached_tokens).toBe(80);
    expect(usage.body.cache_reads).toEqual([
      { model_id: "general-1", long_context: false, cached_tokens: 80 },
    ]);
    expect(usage.body.by_model).toEqual([
      expect.objectContaining({ model: "general", spend: 0.75, requests: 2 }),
      expect.objectContaining({ model: "fast", spend: 0.125, requests: 1 }),
    ]);
    expect(usage.body.by_key.map((k: { key_alias: string; key_name: string }) => k.key_alias)).toEqual([
      "a",
      "b",
    ]);
    expect(usage.body.by_key[0].key_name).toBe(a.body.key_name);
    expect(usage.body.recent).toHaveLength(3);
    expect(usage.body.recent[0]).toMatchObject({ model_group: "general", spend: 0.5, total_tokens: 150 });

    const month = await call(app, "GET", "/spend/usage?user_id=usage&days=90");
    expect(month.body.daily).toHaveLength(90);
    expect(month.body.totals).toMatchObject({ spend: 1.875, requests: 5, failed_requests: 1 });
    expect(month.body.by_model[0]).toMatchObject({ model: "fast", requests: 3, failed_requests: 1 });

    // A range ending before today: the one day two days ago, nothing of today's.
    const twoDaysAgo = new Date(now - 2 * DAY).toISOString().slice(0, 10);
    const oneDay = await call(app, "GET", `/spend/usage?user_id=usage&days=1&end_date=${twoDaysAgo}`);
    expect(oneDay.status).toBe(200);
    expect(oneDay.body).toMatchObject({ start_date: twoDaysAgo, end_date: twoDaysAgo });
    expect(oneDay.body.totals).toMatchObject({ spend: 0.375, requests: 2, cached_tokens: 0 });
    expect(oneDay.body.daily.map((d: { date: string }) => d.date)).toEqual([twoDaysAgo]);
    expect(oneDay.body.recent).toHaveLength(2);
    const impossible = await call(app, "GET", "/spend/usage?user_id=usage&days=1&end_date=2026-02-30");
    expect(impossible.status).toBe(400);
    expect(impossible.body.error.param).toBe("end_date");

    const perKey = await call(app, "GET", `/spend/usage?api_key=${b.body.token}&days=30`);
    expect(perKey.body.totals).toMatchObject({ spend: 0.125, requests: 1 });

    // Neither user nor key: the whole platform, a master-key call (no key, no user) included.
    const before = (await call(app, "GET", "/spend/usage?days=90")).body;
    store.spend.record({
      ...row(a.body, 0, "general", 0.0625),
      requestId: "usage-master-key",
      keyHash: null,
      keyAlias: null,
      userId: null,
    });
    await store.spend.flush();
    const platform = await call(app, "GET", "/spend/usage?days=90");
    expect(platform.status).toBe(200);
    expect(platform.body.user_id).toBeUndefined();
    expect(before.totals.spend).toBeGreaterThanOrEqual(1.875);
    expect(platform.body.totals.spend).toBeCloseTo(before.totals.spend + 0.0625, 10);
    expect(platform.body.totals.requests).toBe(before.totals.requests + 1);
    expect(platform.body.by_key).toContainEqual(expect.objectContaining({ api_key: null, spend: 0.0625 }));
    expect((await call(app, "GET", "/spend/usage?user_id=usage&days=90")).body.totals.spend).toBe(1.875);

    const logs = await call(app, "GET", `/spend/logs?api_key=${a.body.key}`);
    expect(logs.body).toHaveLength(2);
    expect(logs.body[0]).toMatchObject({
      api_key: a.body.token,
      user: "usage",
      model_group: "general",
      spend: 0.5,
      usage_details: cachedCall,
    });
    // A row without a breakdown (billed from estimates) says null; both match the admin API's schema.
    expect(logs.body[1].usage_details).toBeNull();
    expect(spendLogsResponse.parse(logs.body)[0]?.usage_details).toEqual(cachedCall);
    const day = new Date(now - 2 * DAY).toISOString().slice(0, 10);
    const ranged = await call(app, "GET", `/spend/logs?user_id=usage&start_date=${day}&end_date=${day}`);
    expect(ranged.body.map((r: { spend: number }) => r.spend).sort()).toEqual([0.125, 0.25]);

    const keyInfo = await call(app, "GET", `/key/info?key=${a.body.token}`);
    expect(keyInfo.body.info.spend).toBe(0.75);
    const userInfo = await call(app, "GET", "/user/info?user_id=usage");
    expect(userInfo.body.user_info.spend).toBe(1.875);
  });
});

describe("max_parallel_requests", () => {
  it("/key/generate and /key/update accept and return it, /key/info shows it, null clears it; /user/new too", async () => {
    const made = await call(app, "POST", "/key/generate", { max_parallel_requests: 3 });
    expect(made.status).toBe(200);
    expect(made.body.max_parallel_requests).toBe(3);
    const updated = await call(app, "POST", "/key/update", { key: made.body.key, max_parallel_requests: 1 });
    expect(updated.body.max_parallel_requests).toBe(1);
    const info = await call(app, "GET", `/key/info?key=${made.body.token}`);
    expect(info.body.info.max_parallel_requests).toBe(1);
    const cleared = await call(app, "POST", "/key/update", {
      key: made.body.key,
      max_parallel_requests: null,
    });
    expect(cleared.body.max_parallel_requests).toBeNull();
    const plain = await call(app, "POST", "/key/generate", {});
    expect(plain.body.max_parallel_requests).toBeNull();
    const user = await newUser("parallel-user", { max_parallel_requests: 4 });
    expect(user.max_parallel_requests).toBe(4);
  });

  it.each([-1, 1.5, "two"])("refuses max_parallel_requests %j with 400 naming it", async (value) => {
    const res = await call(app, "POST", "/key/generate", { max_parallel_requests: value });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe("max_parallel_requests");
  });
});

describe("/user/delete", () => {
  it("revokes the users' keys (kept, without an owner), ends their memberships and deletes them; unknown ids are 404", async () => {
    await newUser("leaver");
    await call(app, "POST", "/team/new", { team_id: "leavers", members_with_roles: [{ user_id: "leaver" }] });
    const own = await call(app, "POST", "/key/generate", { user_id: "leaver" });
    const team = await call(app, "POST", "/key/generate", { user_id: "leaver", team_id: "leavers" });
    expect((await call(app, "GET", "/key/list", undefined, own.body.key)).status).toBe(403);

    const unknown = await call(app, "POST", "/user/delete", { user_ids: ["leaver", "nobody"] });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.param).toBe("user_ids");
    expect((await call(app, "GET", "/user/info?user_id=leaver")).status).toBe(200);

    const res = await call(app, "POST", "/user/delete", { user_ids: ["leaver"] });
    expect(res.status).toBe(200);
    // LiteLLM answers the number of users deleted, a bare JSON number.
    expect(deleteUsersResponse.parse(res.body)).toBe(1);
    expect((await call(app, "GET", "/user/info?user_id=leaver")).status).toBe(404);
    expect((await call(app, "GET", "/key/list", undefined, own.body.key)).status).toBe(401);
    const info = await call(app, "GET", `/key/info?key=${own.body.token}`);
    expect(info.body.info).toMatchObject({ user_id: null, status: "revoked" });
    const members = await call(app, "GET", "/team/info?team_id=leavers");
    expect(members.body.team_memberships).toEqual([]);
    const audit = await call(app, "GET", "/audit/logs?action=user.delete");
    expect(audit.body.logs.map((l: { user_id: string }) => l.user_id)).toEqual(["leaver"]);
    // What the deletion took with it is audited too: both keys revoked, and the membership it ended.
    const revoked = await call(app, "GET", "/audit/logs?action=key.delete&user_id=leaver");
    const prefixes = revoked.body.logs.map((l: { key_hash_prefix: string }) => l.key_hash_prefix).sort();
    expect(prefixes).toEqual([own.body.token.slice(0, 12), team.body.token.slice(0, 12)].sort());
    const ended = await call(app, "GET", "/audit/logs?action=team.member_delete&team_id=leavers");
    expect(ended.body.logs).toEqual([
      expect.objectContaining({ user_id: "leaver", team_id: "leavers", after: null }),
    ]);
  });
});
