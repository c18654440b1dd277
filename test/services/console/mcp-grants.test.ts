/**
 * A key's MCP grants (LiteLLM's `object_permission`) through the console, deny by default: only an operator
 * (Admin view) lists the gateway's MCP servers and sets a key's servers and tools (edit or generate); a user
 * naming `object_permission` on their own key (edit or generate), or a team admin on a team key, is refused 403
 * and nothing changes. The grant is
 * saved through the gateway's `/key/update`, audited as the operator, and the key then lists exactly the granted
 * tool on `/mcp`. A team's grant likewise: set by an operator on a new or edited team (Teams view), refused to
 * the team's own admin, inherited by the team's keys. Real gateway (Postgres, Redis) with a real SDK-made MCP server upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleStack, chatVisitor, startConsoleStack, type Visitor } from "../../helpers/console.js";
import { mcpClient, startMcpServer, type TestMcpServer } from "../../helpers/mcp-server.js";

let upstream: TestMcpServer;
let stack: ConsoleStack;
let admin: Visitor; // first registered chat account: ADMIN
let alice: Visitor;
let aliceId: string;

beforeAll(async () => {
  upstream = await startMcpServer();
  stack = await startConsoleStack({ gatewayConfig: `mcp_servers:\n  tools:\n    url: ${upstream.url}\n` });
  admin = (await chatVisitor(stack, "admin@example.com")).visitor;
  ({ visitor: alice, userId: aliceId } = await chatVisitor(stack, "alice@example.com"));
}, 60_000);
afterAll(async () => {
  await stack?.close();
  await upstream?.close();
});

async function aliceKey(name: string): Promise<{ key: string; token: string }> {
  const res = await alice.request<{ key: string; token: string }>("POST", "/api/keys", { body: { name } });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe("a key's MCP grants", () => {
  it("lists the declared MCP servers and their tools to an administrator only", async () => {
    const res = await admin.request<{
      servers: Array<{ server_name: string; tools: Array<{ name: string }> }>;
    }>("GET", "/api/admin/mcp-servers");
    expect(res.status, res.text).toBe(200);
    expect(res.body.servers.map((s) => s.server_name)).toEqual(["tools"]);
    expect(res.body.servers[0]?.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["tools-add"]));
    expect((await alice.request("GET", "/api/admin/mcp-servers")).status).toBe(403);
  });

  it("refuses object_permission from a user on their own key (edit and generate): 403, nothing granted", async () => {
    const { token } = await aliceKey("agent");
    const grant = { object_permission: { mcp_servers: ["tools"] } };
    const edit = await alice.request("POST", `/api/keys/${token}`, { body: { name: "agent", ...grant } });
    expect(edit.status).toBe(403);
    expect(edit.body).toMatchObject({ error: { type: "permission_error" } });
    expect(String((edit.body as { error: { message: string } }).error.message)).toContain(
      "object_permission",
    );
    expect((await stack.admin.keyInfo(token)).info.object_permission ?? null).toBeNull();

    const generated = await alice.request("POST", "/api/keys", { body: { name: "agent-2", ...grant } });
    expect(generated.status).toBe(403);
    const own = await stack.admin.listKeys({ return_full_object: true, size: 100 });
    expect(own.keys.some((k) => typeof k !== "string" && k.key_alias === "agent-2")).toBe(false);
  });

  it("lets an administrator grant a server narrowed to one tool, audited; the key then lists only that tool; null clears", async () => {
    const { key, token } = await aliceKey("granted");
    const object_permission = { mcp_servers: ["tools"], mcp_tool_permissions: { tools: ["add"] } };
    const saved = await admin.request("POST", `/api/admin/keys/${token}`, { body: { object_permission } });
    expect(saved.status, saved.text).toBe(200);
    expect((await stack.admin.keyInfo(token)).info.object_permission).toEqual(object_permission);
    const listed = await admin.request<{ keys: Array<{ token: string; object_permission: unknown }> }>(
      "GET",
      "/api/admin/keys",
    );
    expect(listed.body.keys.find((k) => k.token === token)?.object_permission).toEqual(object_permission);

    const audit = (await stack.admin.auditLogs({ key_hash: token })).logs;
    const update = audit.find((r) => r.action === "key.update");
    expect(update?.actor).toMatch(/^console:/);
    expect(JSON.stringify(update)).toContain("object_permission");

    const client = await mcpClient(stack.gateway.url, { authorization: `Bearer ${key}` });
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["tools-add"]);
    } finally {
      await client.close();
    }

    const cleared = await admin.request("POST", `/api/admin/keys/${token}`, {
      body: { object_permission: null },
    });
    expect(cleared.status).toBe(200);
    expect((await stack.admin.keyInfo(token)).info.object_permission ?? null).toBeNull();
  });

  it("lets an administrator generate a key with a grant; a team admin generating a team key may not grant one (403)", async () => {
    const object_permission = { mcp_servers: ["tools"] };
    const made = await admin.request<{ token: string }>("POST", "/api/admin/keys", {
      body: { name: "ops-agent", object_permission },
    });
    expect(made.status, made.text).toBe(201);
    expect((await stack.admin.keyInfo(made.body.token)).info.object_permission).toEqual(object_permission);

    await aliceKey("provisions-alice");
    const team = await stack.admin.newTeam({
      team_alias: "agents",
      members_with_roles: [{ role: "admin", user_id: aliceId }],
    });
    const path = `/api/teams/${team.team_id}/keys`;
    const refused = await alice.request("POST", path, { body: { name: "svc", object_permission } });
    expect(refused.status).toBe(403);
    const allowed = await alice.request("POST", path, { body: { name: "svc" } });
    expect(allowed.status, allowed.text).toBe(201);
  });

  it("refuses a malformed grant with a 400 naming the field", async () => {
    const { token } = await aliceKey("malformed");
    const res = await admin.request("POST", `/api/admin/keys/${token}`, {
      body: { object_permission: { mcp_servers: "tools" } },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { param: "object_permission.mcp_servers" } });
  });

  it("lets an administrator grant a team MCP servers (new and edit), shown to operators only; a team admin may not (403); the team's keys inherit it", async () => {
    const object_permission = { mcp_servers: ["tools"], mcp_tool_permissions: { tools: ["echo"] } };
    const created = await admin.request<{ team_id: string; object_permission: unknown }>(
      "POST",
      "/api/teams",
      {
        body: { team_alias: "tool-users", object_permission: { mcp_servers: ["tools"] } },
      },
    );
    expect(created.status, created.text).toBe(201);
    const teamId = created.body.team_id;
    expect((await stack.admin.teamInfo(teamId)).team_info.object_permission).toEqual({
      mcp_servers: ["tools"],
    });

    const edited = await admin.request("POST", `/api/teams/${teamId}`, { body: { object_permission } });
    expect(edited.status, edited.text).toBe(200);
    expect((await stack.admin.teamInfo(teamId)).team_info.object_permission).toEqual(object_permission);
    const shown = await admin.request<{ team: { object_permission: unknown } }>(
      "GET",
      `/api/teams/${teamId}`,
    );
    expect(shown.body.team.object_permission).toEqual(object_permission);

    await stack.admin.addTeamMember({ team_id: teamId, member: { role: "admin", user_id: aliceId } });
    const refused = await alice.request("POST", `/api/teams/${teamId}`, {
      body: { object_permission: { mcp_servers: ["tools"] } },
    });
    expect(refused.status).toBe(403);
    expect((await stack.admin.teamInfo(teamId)).team_info.object_permission).toEqual(object_permission);
    const asMember = await alice.request<{ team: Record<string, unknown> }>("GET", `/api/teams/${teamId}`);
    expect(asMember.status, asMember.text).toBe(200);
    expect(asMember.body.team).not.toHaveProperty("object_permission");

    const teamKey = await stack.admin.generateKey({ team_id: teamId });
    const client = await mcpClient(stack.gateway.url, { authorization: `Bearer ${teamKey.key}` });
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["tools-echo"]);
    } finally {
      await client.close();
    }

    const cleared = await admin.request("POST", `/api/teams/${teamId}`, {
      body: { object_permission: null },
    });
    expect(cleared.status, cleared.text).toBe(200);
    expect((await stack.admin.teamInfo(teamId)).team_info.object_permission ?? null).toBeNull();
  });
});
