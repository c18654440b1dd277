/**
 * Resources and prompts through `/mcp` (Postgres, Redis, the gateway in process; an SDK server over Streamable
 * HTTP and `@modelcontextprotocol/server-everything` over stdio upstream): listed under server-prefixed names
 * from the servers the caller may reach, read and got through the gateway; a server the key may not reach shows
 * none of them, and reading or getting one of its resources or prompts answers as if it did not exist.
 */
import { createRequire } from "node:module";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall, MASTER_KEY, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";
import { mcpClient, startMcpServer, type TestMcpServer } from "../../../helpers/mcp-server.js";
import { createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../../../helpers/redis.js";

const everything = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/server-everything/dist/index.js",
);

let upstream: TestMcpServer;
let db: TestDatabase;
let gw: TestGateway;
const prefix = uniquePrefix("mcp-resources-prompts");
const clients: Client[] = [];

beforeAll(async () => {
  upstream = await startMcpServer();
  db = await createTestDatabase();
  gw = await startTestGateway(
    `model_list: []
mcp_servers:
  tools:
    url: ${upstream.url}
  everything:
    transport: stdio
    command: ${process.execPath}
    args: ["${everything}", "stdio"]
`,
    { DATABASE_URL: db.url, REDIS_URL, GATEWAY_REDIS_KEY_PREFIX: prefix },
  );
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await gw?.close();
  await upstream?.close();
  await db?.drop();
  await deleteKeys(prefix);
});

async function connect(key: string): Promise<Client> {
  const client = await mcpClient(gw.url, { authorization: `Bearer ${key}` });
  clients.push(client);
  return client;
}

async function mcpError(call: Promise<unknown>): Promise<McpError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe("resources and prompts on /mcp", () => {
  it("passes through every reachable server's resources and prompts under prefixed names (master key)", async () => {
    const client = await connect(MASTER_KEY);
    const { resources } = await client.listResources();
    expect(resources).toContainEqual(
      expect.objectContaining({ name: "tools-readme", uri: "test://notes/readme", mimeType: "text/plain" }),
    );
    expect(resources.some((r) => r.name.startsWith("everything-"))).toBe(true);
    const { prompts } = await client.listPrompts();
    const names = prompts.map((p) => p.name);
    expect(names).toContain("tools-greet");
    expect(names.some((n) => n.startsWith("everything-"))).toBe(true);
    const fromEverything = resources.find((r) => r.name.startsWith("everything-"));
    const read = await client.readResource({ uri: fromEverything?.uri as string });
    expect(read.contents[0]?.uri).toBe(fromEverything?.uri);
  }, 20_000);

  it("reads a resource and gets a prompt for a key granted their server", async () => {
    const res = await adminCall<{ key: string }>(gw, "POST", "/key/generate", {
      object_permission: { mcp_servers: ["tools"], mcp_tool_permissions: { tools: ["echo"] } },
    });
    const client = await connect(res.body.key);
    const read = await client.readResource({ uri: "test://notes/readme" });
    expect(read.contents).toEqual([
      { uri: "test://notes/readme", mimeType: "text/plain", text: "Read me first." },
    ]);
    const prompt = await client.getPrompt({ name: "tools-greet", arguments: { name: "Ada" } });
    expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: "Say hello to Ada." } }]);
  });

  it("shows a key none of a server it may not reach, and refuses to read or get from it", async () => {
    const master = await connect(MASTER_KEY);
    const hidden = (await master.listResources()).resources.find((r) => r.name.startsWith("everything-"));
    const res = await adminCall<{ key: string }>(gw, "POST", "/key/generate", {
      object_permission: { mcp_servers: ["tools"] },
    });
    const client = await connect(res.body.key);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.name)).toEqual(["tools-readme"]);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(["tools-greet"]);
    const unread = await mcpError(client.readResource({ uri: hidden?.uri as string }));
    expect(unread.code).toBe(-32002);
    const everythingPrompt = (await master.listPrompts()).prompts.find((p) =>
      p.name.startsWith("everything-"),
    );
    const unknown = await mcpError(client.getPrompt({ name: everythingPrompt?.name as string }));
    expect(unknown.code).toBe(-32602);
    expect(unknown.message).toContain("Unknown prompt");
  }, 20_000);

  it("shows nothing to a key without grants", async () => {
    const res = await adminCall<{ key: string }>(gw, "POST", "/key/generate", {});
    const client = await connect(res.body.key);
    expect((await client.listResources()).resources).toEqual([]);
    expect((await client.listPrompts()).prompts).toEqual([]);
    expect((await mcpError(client.readResource({ uri: "test://notes/readme" }))).code).toBe(-32002);
  });
});
