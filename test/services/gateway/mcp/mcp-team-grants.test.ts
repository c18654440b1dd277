/**
 * A team's MCP grants (LiteLLM's team `object_permission`, Postgres and Redis, an SDK server upstream): a team
 * key without its own `mcp_servers` inherits its team's; a key with its own reaches only what both name, tools
 * narrowed by both lists; a team grant changed with `/team/update` applies on the next request; and the team's
 * `rpm_limit` counts its keys' tool calls together (the pipeline's admission, team subjects included); a team
 * key's tool calls are in the team's spend (the spend row names the team).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { adminCall } from "../../../helpers/gateway.js";
import { mcpError, useMcpTestGateway } from "../../../helpers/mcp-gateway.js";
import { waitFor } from "../../../helpers/redis.js";

const stack = useMcpTestGateway(
  (url) => `model_list: []
mcp_servers:
  tools:
    url: ${url}
  second:
    url: ${url}
`,
  { name: "mcp-team-grants" },
);

/** Makes a team; returns its id. */
async function newTeam(body: Record<string, unknown>): Promise<string> {
  const res = await adminCall<{ team_id: string; object_permission: unknown }>(
    stack.gw,
    "POST",
    "/team/new",
    body,
  );
  expect(res.status).toBe(200);
  expect(res.body.object_permission).toEqual(body.object_permission ?? null);
  return res.body.team_id;
}

/** A client with a new key of `teamId` (`body` adds the key's own fields). */
async function teamClient(teamId: string, body: Record<string, unknown> = {}): Promise<Client> {
  return (await teamKeyClient(teamId, body)).client;
}

/** {@link teamClient}, with the key's hash (`token`, the spend log's `api_key`). */
async function teamKeyClient(
  teamId: string,
  body: Record<string, unknown> = {},
): Promise<{ client: Client; token: string }> {
  const { key, token } = await stack.newKey({ team_id: teamId, ...body });
  return { client: await stack.connect(key), token };
}

const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();

describe("a team's object_permission on /mcp", () => {
  it("is inherited by a team key that names no servers of its own", async () => {
    const team = await newTeam({
      object_permission: { mcp_servers: ["tools"], mcp_tool_permissions: { tools: ["echo", "add"] } },
    });
    const client = await teamClient(team);
    expect(await names(client)).toEqual(["tools-add", "tools-echo"]);
    const added = await client.callTool({ name: "tools-add", arguments: { a: 2, b: 3 } });
    expect(added.content).toEqual([{ type: "text", text: "5" }]);
  });

  it("narrows a key with its own grant to the servers and tools both name", async () => {
    const team = await newTeam({
      object_permission: { mcp_servers: ["tools"], mcp_tool_permissions: { tools: ["echo", "add"] } },
    });
    const client = await teamClient(team, {
      object_permission: {
        mcp_servers: ["tools", "second"],
        mcp_tool_permissions: { tools: ["add", "big"] },
      },
    });
    expect(await names(client)).toEqual(["tools-add"]);
    const before = stack.upstream.log.calls.length;
    await expect(client.callTool({ name: "second-add", arguments: { a: 1, b: 1 } })).rejects.toThrow(
      /Unknown tool: second-add/,
    );
    await expect(client.callTool({ name: "tools-big", arguments: {} })).rejects.toThrow(/Unknown tool/);
    expect(stack.upstream.log.calls.length).toBe(before);
  });

  it("grants nothing to a team key when neither the key nor the team names a server", async () => {
    const team = await newTeam({ team_alias: "no-grants" });
    expect(await names(await teamClient(team))).toEqual([]);
  });

  it("applies /team/update's object_permission on the next request", async () => {
    const team = await newTeam({ object_permission: { mcp_servers: ["second"] } });
    const client = await teamClient(team);
    expect((await names(client)).length).toBeGreaterThan(0);
    const cleared = await adminCall(stack.gw, "POST", "/team/update", {
      team_id: team,
      object_permission: null,
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.object_permission).toBeNull();
    await waitFor("the team's grant cleared", async () => (await names(client)).length === 0);
    const granted = await adminCall(stack.gw, "POST", "/team/update", {
      team_id: team,
      object_permission: { mcp_servers: ["tools"], mcp_tool_permissions: { tools: ["echo"] } },
    });
    expect(granted.status).toBe(200);
    await waitFor("the team's new grant", async () => (await names(client)).join() === "tools-echo");
  });

  it("refuses /team/new with a malformed object_permission (400 naming the field)", async () => {
    const res = await adminCall<{ error: { message: string } }>(stack.gw, "POST", "/team/new", {
      object_permission: { mcp_servers: "tools" },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("object_permission");
  });

  it("counts the tool calls of all the team's keys against the team's rpm_limit", async () => {
    const team = await newTeam({ rpm_limit: 2, object_permission: { mcp_servers: ["tools"] } });
    const first = await teamClient(team);
    const second = await teamClient(team);
    await first.callTool({ name: "tools-add", arguments: { a: 1, b: 1 } });
    await second.callTool({ name: "tools-add", arguments: { a: 1, b: 2 } });
    const before = stack.upstream.log.calls.length;
    const refused = await mcpError(first.callTool({ name: "tools-add", arguments: { a: 1, b: 3 } }));
    expect(refused.data).toMatchObject({ status: 429, type: "rate_limit_error" });
    expect(stack.upstream.log.calls.length).toBe(before);
  });

  it("counts its keys' resource reads and prompt gets against the team's rpm_limit too", async () => {
    const team = await newTeam({ rpm_limit: 2, object_permission: { mcp_servers: ["tools"] } });
    const first = await teamClient(team);
    const second = await teamClient(team);
    await first.readResource({ uri: "test://notes/readme" });
    await second.getPrompt({ name: "tools-greet", arguments: { name: "Ada" } });
    const before = stack.upstream.log.reads.length;
    const refused = await mcpError(second.readResource({ uri: "test://notes/readme" }));
    expect(refused.data).toMatchObject({ status: 429, type: "rate_limit_error" });
    expect(stack.upstream.log.reads.length).toBe(before);
  });

  it("books a team key's tool calls to the team (the spend row's team_id)", async () => {
    const team = await newTeam({ object_permission: { mcp_servers: ["tools"] } });
    const { client, token } = await teamKeyClient(team);
    await client.callTool({ name: "tools-add", arguments: { a: 2, b: 3 } });
    await stack.gw.gateway.store?.spend.flush(5000);
    const pool = new pg.Pool({ connectionString: stack.db?.url });
    try {
      const { rows } = await pool.query("SELECT team_id, call_type FROM spend_logs WHERE api_key = $1", [
        token,
      ]);
      expect(rows).toEqual([{ team_id: team, call_type: "call_mcp_tool" }]);
    } finally {
      await pool.end();
    }
  });
});
