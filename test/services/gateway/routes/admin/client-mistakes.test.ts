/**
 * Client mistakes on the admin API are 400s naming the field, before Postgres sees them (NUL characters,
 * dates out of range); a repeated /user/new says it changed nothing; a Postgres outage is 503, not 500.
 */
import type { FastifyInstance } from "fastify";
import { describe, expect, it } from "vitest";
import { databasePerTest } from "../../../../helpers/postgres.js";
import { adminApp, call, openStore } from "../../store/harness.js";

const { cleanups, database, proxyTo } = databasePerTest();

async function admin(url?: string): Promise<FastifyInstance> {
  const opened = await openStore(url ?? (await database()).url);
  const app = await adminApp(opened);
  cleanups.push(
    () => opened.store.close(),
    () => app.close(),
  );
  return app;
}

const NUL = "\u0000";

describe("NUL characters", () => {
  it("are refused with 400 naming the field, in bodies (values and keys) and query strings", async () => {
    const app = await admin();
    expect((await call(app, "POST", "/user/new", { user_id: "ok" })).status).toBe(200);
    const cases: Array<[string, string, unknown, string]> = [
      ["POST", "/user/new", { user_id: `a${NUL}b` }, "user_id"],
      ["POST", "/user/new", { user_id: "u1", user_email: `x${NUL}@example.com` }, "user_email"],
      ["POST", "/user/new", { user_id: "u2", metadata: { team: { name: `t${NUL}` } } }, "metadata.team.name"],
      ["POST", "/key/generate", { key_alias: `alias${NUL}` }, "key_alias"],
      ["POST", "/key/generate", { models: ["general", `gpt${NUL}`] }, "models.1"],
      ["POST", "/key/generate", { metadata: { [`k${NUL}`]: 1 } }, "metadata.k\\u0000"],
      ["GET", "/user/info?user_id=a%00b", undefined, "user_id"],
      ["GET", "/key/list?key_alias=%00", undefined, "key_alias"],
      ["GET", "/spend/logs?user_id=x%00", undefined, "user_id"],
    ];
    for (const [method, url, body, param] of cases) {
      const res = await call(app, method as "GET" | "POST", url, body);
      expect({ url, param, status: res.status }).toEqual({ url, param, status: 400 });
      expect(res.body.error).toMatchObject({ type: "invalid_request_error", param });
      expect(res.body.error.message).toContain("NUL");
    }
  });
});

describe("a key's metadata.guardrails", () => {
  it("is refused with 400 naming it when it names an unknown guardrail or mode; a valid one is kept", async () => {
    const app = await admin();
    for (const guardrails of [{ pi: "off" }, { pii: "disabled" }, "monitor"]) {
      const res = await call(app, "POST", "/key/generate", { metadata: { guardrails } });
      expect({ guardrails, status: res.status }).toEqual({ guardrails, status: 400 });
      expect(res.body.error).toMatchObject({ type: "invalid_request_error", param: "metadata.guardrails" });
    }
    const ok = await call(app, "POST", "/key/generate", { metadata: { guardrails: { pii: "monitor" } } });
    expect(ok.status).toBe(200);
    const update = await call(app, "POST", "/key/update", {
      key: (ok.body as unknown as { key: string }).key,
      metadata: { guardrails: { prompt_injection: "sometimes" } },
    });
    expect(update.status).toBe(400);
  });
});

describe("/spend/logs dates", () => {
  it("refuses a date Postgres cannot store with 400 naming the field", async () => {
    const app = await admin();
    for (const [query, param] of [
      ["start_date=275760-09-13", "start_date"],
      ["end_date=%2B275760-09-13", "end_date"],
      ["start_date=0001-01-01", "start_date"],
    ] as const) {
      const res = await call(app, "GET", `/spend/logs?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: "invalid_request_error", param });
    }
    expect((await call(app, "GET", "/spend/logs?start_date=2026-01-01&end_date=9999-12-31")).status).toBe(
      200,
    );
  });
});

describe("/user/new for a user that exists", () => {
  it("changes nothing and says so, naming the limits that differ and /user/update", async () => {
    const app = await admin();
    await call(app, "POST", "/user/new", { user_id: "carol", max_budget: 10, rpm_limit: 5 });
    const again = await call(app, "POST", "/user/new", { user_id: "carol", max_budget: 20, rpm_limit: 5 });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ created: false, max_budget: 10 });
    expect(again.body.message).toContain("changed nothing");
    expect(again.body.message).toContain("max_budget: stored 10, requested 20");
    expect(again.body.message).not.toContain("rpm_limit");
    expect(again.body.message).toContain("/user/update");
  });
});

describe("Postgres outage", () => {
  it("answers admin calls 503 database_unavailable, not 500", async () => {
    const db = await database();
    const proxy = await proxyTo(db);
    const app = await admin(db.urlVia(proxy.port));
    proxy.cut();
    for (const [method, url, body] of [
      ["POST", "/user/new", { user_id: "dave" }],
      ["POST", "/key/generate", {}],
      ["GET", "/key/list", undefined],
      ["GET", "/spend/logs", undefined],
    ] as const) {
      const res = await call(app, method, url, body);
      expect({ url, status: res.status }).toEqual({ url, status: 503 });
      expect(res.body.error).toMatchObject({
        type: "service_unavailable_error",
        code: "database_unavailable",
      });
    }
  });
});

describe("fields the gateway does not know", () => {
  it("a misspelt or unknown field is a 400 naming it (with the field meant), never silently dropped", async () => {
    const app = await admin();
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ["/key/generate", { max_budjet: 5 }, "max_budjet", "did you mean max_budget?"],
      ["/key/generate", { rpmlimit: 5 }, "rpmlimit", "did you mean rpm_limit?"],
      [
        "/user/new",
        { user_id: "speller", budget_duraton: "30d" },
        "budget_duraton",
        "did you mean budget_duration?",
      ],
      ["/team/new", { team_alias: "t", tpm_limt: 10 }, "tpm_limt", "did you mean tpm_limit?"],
      ["/key/generate", { frobnicate: true }, "frobnicate", "not a field of /key/generate"],
    ];
    for (const [url, body, param, hint] of cases) {
      const res = await call(app, "POST", url, body);
      expect({ url, param, status: res.status }).toEqual({ url, param, status: 400 });
      expect(res.body.error).toMatchObject({ type: "invalid_request_error", param });
      expect(res.body.error.message).toContain(hint);
    }
  });

  it("a LiteLLM limit the gateway does not enforce is a 400 when it says something, accepted when empty", async () => {
    const app = await admin();
    const refused = await call(app, "POST", "/key/generate", { model_max_budget: { general: 5 } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: "invalid_request_error", param: "model_max_budget" });
    expect(refused.body.error.message).toContain("not enforced");
    // What LiteLLM's own clients send by default, and fields that only inform, are taken.
    const ok = await call(app, "POST", "/key/generate", {
      model_max_budget: {},
      model_rpm_limit: null,
      allowed_cache_controls: [],
      tags: ["ci"],
      send_invite_email: false,
      max_budget: 1,
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ max_budget: 1 });
  });
});

describe("object_permission naming MCP servers", () => {
  it("a server the config does not declare is a 400 naming it, on keys and teams, in mcp_servers and mcp_tool_permissions", async () => {
    const app = await admin(); // this gateway declares no mcp_servers
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["/key/generate", { object_permission: { mcp_servers: ["wiki"] } }, "object_permission.mcp_servers.0"],
      [
        "/key/generate",
        { object_permission: { mcp_tool_permissions: { wiki: ["search"] } } },
        "object_permission.mcp_tool_permissions.wiki",
      ],
      [
        "/team/new",
        { team_alias: "t", object_permission: { mcp_servers: ["wiki"] } },
        "object_permission.mcp_servers.0",
      ],
    ];
    for (const [url, body, param] of cases) {
      const res = await call(app, "POST", url, body);
      expect({ url, param, status: res.status }).toEqual({ url, param, status: 400 });
      expect(res.body.error).toMatchObject({ type: "invalid_request_error", param });
      expect(res.body.error.message).toContain("wiki");
    }
    // Granting nothing is fine.
    const ok = await call(app, "POST", "/key/generate", { object_permission: { mcp_servers: [] } });
    expect(ok.status).toBe(200);
  });
});
