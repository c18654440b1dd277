/**
 * `/mcp` end to end with the master key: the gateway in process, the SDK's client as the caller, and two real
 * upstream MCP servers: an SDK server over Streamable HTTP started by the test (with a bearer credential from
 * `os.environ/`) and `@modelcontextprotocol/server-everything` over stdio, started by the gateway.
 */
import { createRequire } from "node:module";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { beforeAll, describe, expect, it } from "vitest";
import { MASTER_KEY } from "../../../helpers/gateway.js";
import { useMcpTestGateway } from "../../../helpers/mcp-gateway.js";
import { mcpClient } from "../../../helpers/mcp-server.js";

const everything = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/server-everything/dist/index.js",
);
const UPSTREAM_TOKEN = "upstream-secret-4f1d";

const text = (result: unknown) =>
  ((result as { content: Array<{ type: string; text?: string }> }).content[0]?.text ?? "") as string;

describe("/mcp with the master key", () => {
  const t = useMcpTestGateway(
    (url) => `model_list: []
environment_variables: {TEST_MCP_TOKEN: ${UPSTREAM_TOKEN}}
mcp_servers:
  tools:
    url: ${url}
    transport: http
    auth_type: bearer_token
    auth_value: os.environ/TEST_MCP_TOKEN
    static_headers: {X-Team: platform}
    timeout: 1
    max_result_bytes: 2000
  everything:
    transport: stdio
    command: ${process.execPath}
    args: ["${everything}", "stdio"]
  down:
    url: http://127.0.0.1:9/mcp
`,
    { name: "mcp-route", database: false },
  );
  let client: Client;

  beforeAll(async () => {
    client = await t.connect(MASTER_KEY);
  });

  it("negotiates protocol 2025-11-25 and lists every server's tools under <server>-<tool>, skipping a server that is down", async () => {
    expect(client.getServerVersion()?.name).toBe("ai-gateway");
    expect((client.transport as { protocolVersion?: string }).protocolVersion).toBe("2025-11-25");
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(["tools-echo", "tools-add", "everything-echo", "everything-get-sum"]),
    );
    expect(names.some((n) => n.startsWith("down-"))).toBe(false);
    const add = tools.find((t) => t.name === "tools-add");
    expect(add?.inputSchema.required).toEqual(["a", "b"]);
  }, 20_000);

  it("calls a Streamable HTTP upstream with the configured credential and headers, never the caller's key", async () => {
    const result = await client.callTool({ name: "tools-add", arguments: { a: 2, b: 3 } });
    expect(text(result)).toBe("5");
    const call = t.upstream.log.calls.at(-1);
    expect(call?.tool).toBe("add");
    expect(call?.headers.authorization).toBe(`Bearer ${UPSTREAM_TOKEN}`);
    expect(call?.headers["x-team"]).toBe("platform");
    expect(JSON.stringify(t.upstream.log.calls)).not.toContain(MASTER_KEY);
  });

  it("calls a stdio upstream the gateway started (server-everything)", async () => {
    const result = await client.callTool({ name: "everything-get-sum", arguments: { a: 40, b: 2 } });
    expect(text(result)).toContain("42");
    expect(text(await client.callTool({ name: "everything-echo", arguments: { message: "hi" } }))).toBe(
      "Echo: hi",
    );
  }, 20_000);

  it("refuses arguments that do not match the tool's inputSchema without forwarding them", async () => {
    const before = t.upstream.log.calls.length;
    await expect(client.callTool({ name: "tools-add", arguments: { a: "two", b: 3 } })).rejects.toThrow(
      /Invalid arguments for tool tools-add/,
    );
    expect(t.upstream.log.calls.length).toBe(before);
  });

  it("answers an unknown tool, a server that is down and a slow tool with clear MCP errors", async () => {
    await expect(client.callTool({ name: "tools-nope", arguments: {} })).rejects.toThrow(
      /Unknown tool: tools-nope/,
    );
    await expect(client.callTool({ name: "down-anything", arguments: {} })).rejects.toThrow(
      /MCP server down is unreachable/,
    );
    await expect(client.callTool({ name: "tools-slow", arguments: {} })).rejects.toThrow(
      /MCP server tools did not answer tools\/call within 1 s/,
    );
  }, 20_000);

  it("cuts a result over the server's max_result_bytes, with a marker, and marks it isError", async () => {
    const result = await client.callTool({ name: "tools-big", arguments: {} });
    const content = result.content as Array<{ type: string; text: string }>;
    expect(Buffer.byteLength(JSON.stringify(result.content))).toBeLessThanOrEqual(2000);
    expect(content[0]?.text).toMatch(/^é+$/);
    expect(content.at(-1)?.text).toMatch(
      /^\[Truncated by the gateway: the tool's result was \d+ bytes, over the limit of 2000 bytes of MCP server tools/,
    );
    expect(content.map((c) => c.text)).not.toContain("second item");
    expect(result.isError).toBe(true);
  });

  it("passes a tool's own failure through as a result with isError", async () => {
    const result = await client.callTool({ name: "tools-fail", arguments: {} });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe("the tool failed");
  });

  it("refuses a request without a key (401) and a GET (405)", async () => {
    await expect(mcpClient(t.gw.url, {})).rejects.toThrow(/401|Missing API key/);
    const res = await fetch(`${t.gw.url}/mcp`, { headers: { authorization: `Bearer ${MASTER_KEY}` } });
    expect(res.status).toBe(405);
  });
});
