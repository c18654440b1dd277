/**
 * Who reaches which MCP tool through `/mcp`: virtual keys (Postgres, Redis) with LiteLLM's
 * `object_permission`, deny by default. A key lists and calls only what it was granted; a tool it may not use
 * answers exactly like a tool that does not exist and never reaches the upstream; a server declared
 * `allow_all_keys` is every key's; a grant changed or a key revoked with the admin API takes effect on the next
 * request.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { describe, expect, it } from "vitest";
import { adminCall } from "../../../helpers/gateway.js";
import { type KeyHeader, useMcpTestGateway } from "../../../helpers/mcp-gateway.js";
import { waitFor } from "../../../helpers/redis.js";

const t = useMcpTestGateway(
  (url) => `model_list: []
mcp_servers:
  tools:
    url: ${url}
  open:
    url: ${url}
    allow_all_keys: true
    allowed_tools: [add]
`,
  { name: "mcp-permissions" },
);

/** A key made with the master key; `body` adds object_permission and limits. */
async function newKey(body: Record<string, unknown> = {}): Promise<string> {
  const made = await t.newKey(body);
  expect(made.object_permission).toEqual(body.object_permission ?? null);
  return made.key;
}

const connect = (key: string, header?: KeyHeader) => t.connect(key, header);

const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();

describe("object_permission on /mcp", () => {
  it("lets a key granted one tool list and call only that tool, plus the servers open to all keys", async () => {
    const key = await newKey({
      object_permission: { mcp_servers: ["tools"], mcp_tool_permissions: { tools: ["echo"] } },
    });
    const client = await connect(key);
    expect(await names(client)).toEqual(["open-add", "tools-echo"]);
    const echoed = await client.callTool({ name: "tools-echo", arguments: { text: "hi" } });
    expect(echoed.content).toEqual([{ type: "text", text: "Echo: hi" }]);
    const before = t.upstream.log.calls.length;
    await expect(client.callTool({ name: "tools-add", arguments: { a: 1, b: 2 } })).rejects.toThrow(
      /Unknown tool: tools-add/,
    );
    await expect(client.callTool({ name: "open-echo", arguments: { text: "x" } })).rejects.toThrow(
      /Unknown tool: open-echo/,
    );
    expect(t.upstream.log.calls.length).toBe(before);
  });

  it("denies by default: a key without object_permission reaches only allow_all_keys servers", async () => {
    const client = await connect(await newKey(), "x-litellm-api-key");
    expect(await names(client)).toEqual(["open-add"]);
    await expect(client.callTool({ name: "tools-echo", arguments: { text: "x" } })).rejects.toThrow(
      /Unknown tool: tools-echo/,
    );
    const sum = await client.callTool({ name: "open-add", arguments: { a: 2, b: 2 } });
    expect(sum.content).toEqual([{ type: "text", text: "4" }]);
  });

  it("takes a grant changed with /key/update on the next request, and refuses a revoked key", async () => {
    const key = await newKey({
      object_permission: { mcp_servers: ["tools"], mcp_tool_permissions: { tools: ["echo"] } },
    });
    const client = await connect(key);
    const update = await adminCall(t.gw, "POST", "/key/update", {
      key,
      object_permission: { mcp_servers: ["tools"], mcp_tool_permissions: { tools: ["echo", "add"] } },
    });
    expect(update.status).toBe(200);
    await waitFor("the new grant", async () => (await names(client)).includes("tools-add"));
    expect(await names(client)).toEqual(["open-add", "tools-add", "tools-echo"]);

    expect((await adminCall(t.gw, "POST", "/key/delete", { keys: [key] })).status).toBe(200);
    const listed = await fetch(`${t.gw.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(listed.status).toBe(401);
  });

  it("refuses an object_permission of the wrong shape with a 400 naming the field", async () => {
    const res = await adminCall<{ error: { message: string } }>(t.gw, "POST", "/key/generate", {
      object_permission: { mcp_servers: "tools" },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("object_permission.mcp_servers");
  });
});
