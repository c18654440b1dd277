/**
 * A real MCP server for the tests, made with the official SDK (`McpServer`, Streamable HTTP transport, stateless),
 * listening on an ephemeral port. It records what reached it (the headers and arguments of every tools/call) so
 * that tests can see what the gateway forwarded and what it kept back.
 *
 * Tools: `echo {text}` → "Echo: <text>"; `add {a, b}` → the sum as text; `contact` → a text holding an e-mail
 * address (for the output guard); `slow` → waits until the call is cancelled (for timeouts); `fail` → a result
 * with `isError: true`; `big` → 10,000 bytes of text. Resource `test://notes/readme` (text "Read me first."),
 * resource template `greeting` `test://greetings/{name}` (text "Hello, <name>."); prompt `greet {name}` → one user message "Say hello to <name>."
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/** What reached the server. */
export interface McpServerLog {
  /** One entry per tools/call: the tool, its arguments and the HTTP headers of its request. */
  calls: Array<{ tool: string; arguments: Record<string, unknown>; headers: IncomingHttpHeaders }>;
  /** One entry per resources/read (the URI) and prompts/get (the prompt's name). */
  reads: Array<{ method: "resources/read" | "prompts/get"; name: string }>;
}

export interface TestMcpServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:4321/mcp. */
  url: string;
  log: McpServerLog;
  close(): Promise<void>;
}

function tools(server: McpServer, log: McpServerLog, headers: () => IncomingHttpHeaders): void {
  const seen = (tool: string, args: Record<string, unknown>) =>
    log.calls.push({ tool, arguments: args, headers: headers() });
  server.registerTool(
    "echo",
    { description: "Echoes text", inputSchema: { text: z.string() } },
    async (args) => {
      seen("echo", args);
      return { content: [{ type: "text", text: `Echo: ${args.text}` }] };
    },
  );
  server.registerTool(
    "add",
    { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() } },
    async (args) => {
      seen("add", args);
      return { content: [{ type: "text", text: String(args.a + args.b) }] };
    },
  );
  server.registerTool("contact", { description: "Who to write to" }, async () => {
    seen("contact", {});
    return { content: [{ type: "text", text: "Write to jane.doe@example.com for access." }] };
  });
  server.registerTool("slow", { description: "Never answers on its own" }, async (extra) => {
    seen("slow", {});
    await new Promise<void>((resolve) => extra.signal.addEventListener("abort", () => resolve()));
    return { content: [{ type: "text", text: "late" }] };
  });
  server.registerTool("big", { description: "A 10,000-character answer" }, async () => {
    seen("big", {});
    return {
      content: [
        { type: "text", text: "é".repeat(5000) },
        { type: "text", text: "second item" },
      ],
    };
  });
  server.registerTool("fail", { description: "Always fails" }, async () => {
    seen("fail", {});
    return { isError: true, content: [{ type: "text", text: "the tool failed" }] };
  });
}

/** The server's one resource and one prompt. */
function resourcesAndPrompts(server: McpServer, log: McpServerLog): void {
  server.registerResource(
    "readme",
    "test://notes/readme",
    { description: "A short note", mimeType: "text/plain" },
    async (uri) => {
      log.reads.push({ method: "resources/read", name: uri.href });
      return { contents: [{ uri: uri.href, mimeType: "text/plain", text: "Read me first." }] };
    },
  );
  server.registerResource(
    "greeting",
    new ResourceTemplate("test://greetings/{name}", { list: undefined }),
    { description: "A greeting for anyone", mimeType: "text/plain" },
    async (uri, { name }) => {
      log.reads.push({ method: "resources/read", name: uri.href });
      return { contents: [{ uri: uri.href, mimeType: "text/plain", text: `Hello, ${String(name)}.` }] };
    },
  );
  server.registerPrompt(
    "greet",
    { description: "Greets someone", argsSchema: { name: z.string() } },
    async ({ name }) => {
      log.reads.push({ method: "prompts/get", name: "greet" });
      return { messages: [{ role: "user", content: { type: "text", text: `Say hello to ${name}.` } }] };
    },
  );
}

/** Starts the server on 127.0.0.1. */
export async function startMcpServer(): Promise<TestMcpServer> {
  const log: McpServerLog = { calls: [], reads: [] };
  const http: Server = createServer(async (req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
    const server = new McpServer({ name: "test-server", version: "1.0.0" });
    tools(server, log, () => req.headers);
    resourcesAndPrompts(server, log);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** The SDK's client connected to a gateway's `/mcp` (`gatewayUrl` without a path) with `headers`. */
export async function mcpClient(gatewayUrl: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: "test-caller", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp`), {
    requestInit: { headers },
  });
  await client.connect(transport);
  return client;
}
