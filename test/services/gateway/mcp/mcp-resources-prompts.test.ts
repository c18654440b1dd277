/**
 * Resources and prompts through `/mcp` (Postgres, Redis, the gateway in process; an SDK server over Streamable
 * HTTP and `@modelcontextprotocol/server-everything` over stdio upstream): listed under server-prefixed names
 * from the servers the caller may reach, read and got through the gateway; a server the key may not reach shows
 * none of them, and reading or getting one of its resources or prompts answers as if it did not exist. A read
 * or a get counts against the key's rpm like a tools/call (listing does not).
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { MASTER_KEY } from "../../../helpers/gateway.js";
import { mcpError, useMcpTestGateway } from "../../../helpers/mcp-gateway.js";

const everything = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/server-everything/dist/index.js",
);

const stack = useMcpTestGateway(
  (url) => `model_list: []
mcp_servers:
  tools:
    url: ${url}
  everything:
    transport: stdio
    command: ${process.execPath}
    args: ["${everything}", "stdio"]
`,
  { name: "mcp-resources-prompts" },
);

describe("resources and prompts on /mcp", () => {
  it("passes through every reachable server's resources and prompts under prefixed names (master key)", async () => {
    const client = await stack.connect(MASTER_KEY);
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
    const client = await stack.connect(
      (
        await stack.newKey({
          object_permission: { mcp_servers: ["tools"], mcp_tool_permissions: { tools: ["echo"] } },
        })
      ).key,
    );
    const read = await client.readResource({ uri: "test://notes/readme" });
    expect(read.contents).toEqual([
      { uri: "test://notes/readme", mimeType: "text/plain", text: "Read me first." },
    ]);
    const prompt = await client.getPrompt({ name: "tools-greet", arguments: { name: "Ada" } });
    expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: "Say hello to Ada." } }]);
  });

  it("shows a key none of a server it may not reach, and refuses to read or get from it", async () => {
    const master = await stack.connect(MASTER_KEY);
    const hidden = (await master.listResources()).resources.find((r) => r.name.startsWith("everything-"));
    const client = await stack.connect(
      (
        await stack.newKey({
          object_permission: { mcp_servers: ["tools"] },
        })
      ).key,
    );
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
    const client = await stack.connect((await stack.newKey({})).key);
    expect((await client.listResources()).resources).toEqual([]);
    expect((await client.listPrompts()).prompts).toEqual([]);
    expect((await mcpError(client.readResource({ uri: "test://notes/readme" }))).code).toBe(-32002);
  });

  it("counts resources/read and prompts/get against the key's rpm_limit; the read over it never reaches the upstream", async () => {
    const client = await stack.connect(
      (await stack.newKey({ object_permission: { mcp_servers: ["tools"] }, rpm_limit: 2 })).key,
    );
    await client.readResource({ uri: "test://notes/readme" });
    await client.getPrompt({ name: "tools-greet", arguments: { name: "Ada" } });
    const before = stack.upstream.log.reads.length;
    for (const refused of [
      await mcpError(client.readResource({ uri: "test://notes/readme" })),
      await mcpError(client.getPrompt({ name: "tools-greet", arguments: { name: "Bo" } })),
    ]) {
      expect(refused.code).toBe(-32003);
      expect(refused.data).toMatchObject({ status: 429, type: "rate_limit_error" });
    }
    expect(stack.upstream.log.reads.length).toBe(before);
    // Listing is not counted: it still answers.
    expect((await client.listResources()).resources.map((r) => r.name)).toEqual(["tools-readme"]);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(["tools-greet"]);
  });

  it("passes resource templates through under prefixed names, and reads a URI one of them matches", async () => {
    const master = await stack.connect(MASTER_KEY);
    const all = (await master.listResourceTemplates()).resourceTemplates;
    expect(all).toContainEqual(
      expect.objectContaining({ name: "tools-greeting", uriTemplate: "test://greetings/{name}" }),
    );
    expect(all.some((t) => t.name.startsWith("everything-"))).toBe(true);

    const granted = await stack.connect(
      (await stack.newKey({ object_permission: { mcp_servers: ["tools"] } })).key,
    );
    const { resourceTemplates } = await granted.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.name)).toEqual(["tools-greeting"]);
    const read = await granted.readResource({ uri: "test://greetings/ada" });
    expect(read.contents).toEqual([
      { uri: "test://greetings/ada", mimeType: "text/plain", text: "Hello, ada." },
    ]);
    expect(stack.upstream.log.reads.at(-1)).toEqual({
      method: "resources/read",
      name: "test://greetings/ada",
    });

    const denied = await stack.connect((await stack.newKey({})).key);
    expect((await denied.listResourceTemplates()).resourceTemplates).toEqual([]);
    const before = stack.upstream.log.reads.length;
    expect((await mcpError(denied.readResource({ uri: "test://greetings/bo" }))).code).toBe(-32002);
    expect(stack.upstream.log.reads.length).toBe(before);
  }, 20_000);

  it("does not advertise resource subscriptions (a stateless server has no stream to notify on)", async () => {
    const client = await stack.connect(MASTER_KEY);
    const resources = client.getServerCapabilities()?.resources;
    expect(resources).toBeDefined();
    expect(resources?.subscribe).toBeUndefined();
    const refused = await mcpError(client.subscribeResource({ uri: "test://notes/readme" }));
    expect(refused.code).toBe(-32601);
  });
});
