/**
 * `/mcp`: the gateway's MCP endpoint, Streamable HTTP transport (MCP specification 2025-11-25, "Transports"),
 * served by the official SDK's `Server` and `StreamableHTTPServerTransport` in stateless mode: every POST
 * carries its own JSON-RPC message(s) and is answered with JSON, so any gateway instance can answer any
 * request and no session outlives its key. The key is checked on every request by the auth plugin
 * (`Authorization: Bearer <key>`, or LiteLLM's `x-litellm-api-key`); no key, no answer (401).
 *
 * Methods: `initialize`, `ping`, `tools/list` (the caller's tools, `tools.ts`), `tools/call`
 * (`tool-call.ts`), `resources/list`, `resources/templates/list` and `resources/read` (`resources.ts`; no
 * `resources/subscribe`: a stateless server cannot send the updates), `prompts/list` and `prompts/get`
 * (`prompts.ts`). GET (a server-sent event stream) and DELETE (ending a session) answer 405: a stateless
 * server has neither.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AuthContext } from "../auth/types.js";
import { traceIdFor } from "../tracing/call-trace.js";
import { getPrompt, listPrompts } from "./prompts.js";
import { listResources, listResourceTemplates, readResource } from "./resources.js";
import { callTool, type ToolCallDeps } from "./tool-call.js";
import { listedTool, offeredTools } from "./tools.js";

/** The gateway's `serverInfo` in `initialize`. */
const SERVER_INFO = { name: "ai-gateway", version: "1" };

/** Options of {@link mcpRoutes}. */
export interface McpRouteOptions {
  deps: Omit<ToolCallDeps, "log">;
}

/** Registers `POST /mcp` (and 405 for GET and DELETE). */
export async function mcpRoutes(app: FastifyInstance, options: McpRouteOptions): Promise<void> {
  const config = { litellmKeyHeader: true, route: "/mcp" };
  app.post("/mcp", { config }, (request, reply) =>
    serve(request, reply, { ...options.deps, log: request.log }),
  );
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .code(405)
      .header("allow", "POST")
      .send({
        jsonrpc: "2.0",
        error: { code: -32000, message: "Method not allowed: this MCP server is stateless; send POST /mcp." },
        id: null,
      });
  app.get("/mcp", { config }, notAllowed);
  app.delete("/mcp", { config }, notAllowed);
}

/** Answers one POST with a fresh SDK server bound to the caller. */
async function serve(request: FastifyRequest, reply: FastifyReply, deps: ToolCallDeps): Promise<void> {
  const auth = request.auth as AuthContext;
  const traceId = traceIdFor(request.id);
  const server = new Server(SERVER_INFO, {
    capabilities: {
      tools: { listChanged: false },
      // No `subscribe`: a stateless server has no stream to send resource updates on.
      resources: { listChanged: false },
      prompts: { listChanged: false },
    },
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const offered = await offeredTools(deps.upstreams, auth, deps.log);
    return { tools: [...offered.values()].map(listedTool) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (call, extra) =>
    callTool(deps, {
      auth,
      requestId: `${request.id}:${String(extra.requestId)}`,
      traceId,
      name: call.params.name,
      arguments: call.params.arguments ?? {},
      signal: extra.signal,
    }),
  );
  const { upstreams, log } = deps;
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: await listResources(upstreams, auth, log),
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: await listResourceTemplates(upstreams, auth, log),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (read, extra) =>
    readResource(deps, auth, log, read.params.uri, extra.signal),
  );
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: await listPrompts(upstreams, auth, log),
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (get, extra) =>
    getPrompt(deps, auth, get.params.name, get.params.arguments, extra.signal),
  );
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  reply.raw.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  reply.hijack();
  reply.raw.setHeader("x-request-id", request.id);
  if (deps.tracer !== undefined) reply.raw.setHeader("x-trace-id", traceId);
  await transport.handleRequest(request.raw, reply.raw, request.body);
}
