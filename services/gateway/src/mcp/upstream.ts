/**
 * One upstream MCP server as the gateway's client sees it (the SDK's `Client` over Streamable HTTP, SSE or a
 * stdio child process the gateway starts): connected on first use and again after the connection drops, its
 * tool, resource, resource template and prompt lists cached for {@link TOOL_LIST_TTL_MS}, every request bounded by the server's timeout.
 *
 * Failures become {@link McpUpstreamError}s whose message names the server and what failed, never its URL,
 * headers or credentials. The SDK's own error text (which may carry the URL) and a stdio server's stderr are
 * logged at debug level only, never sent to a caller, and with every credential of the server's config (URL,
 * its query values and user info, header values and their words, `env` values) replaced by `[redacted]`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  ErrorCode,
  type GetPromptResult,
  McpError,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { FastifyBaseLogger } from "fastify";
import type { McpServerConfig } from "../config/mcp-servers.js";

/** How long a server's tool (resource, prompt) list is reused before it is listed again, ms. */
export const TOOL_LIST_TTL_MS = 30_000;

/** The most items of one kind read from a server's pages. */
const MAX_LISTED = 10_000;

/** What the gateway lists of a server, by MCP method. */
interface Listings {
  "tools/list": Tool[];
  "resources/list": Resource[];
  "resources/templates/list": ResourceTemplate[];
  "prompts/list": Prompt[];
}

/** The gateway's client identity towards upstream servers (MCP `clientInfo`). */
const CLIENT_INFO = { name: "ai-gateway", version: "1" };

/**
 * An upstream failure for the caller: `reason` is the gateway's label (`unreachable`, `timeout`,
 * `upstream_error`), `message` safe to show (no URL, header or credential).
 */
export class McpUpstreamError extends Error {
  override name = "McpUpstreamError";
  constructor(
    readonly reason: "unreachable" | "timeout" | "upstream_error",
    message: string,
  ) {
    super(message);
  }

  /** The JSON-RPC error the caller gets (MCP: InternalError, with the reason in `data`). */
  toMcpError(): McpError {
    return new McpError(ErrorCode.InternalError, this.message, { reason: this.reason });
  }
}

/** A connected (or connectable) upstream server. */
export class McpUpstream {
  private client: Promise<Client> | undefined;
  private readonly listed = new Map<keyof Listings, { at: number; items: unknown[] }>();
  /** Replaces the server's credentials in a text that is logged. */
  private readonly redact: (text: string) => string;

  constructor(
    readonly config: McpServerConfig,
    private readonly log: FastifyBaseLogger,
  ) {
    this.redact = redactor(config);
  }

  /**
   * The server's tools as it lists them (every page), without those `allowed_tools` / `disallowed_tools` take
   * away; cached for {@link TOOL_LIST_TTL_MS}.
   * @throws McpUpstreamError when the server cannot be reached or does not answer in time.
   */
  async tools(): Promise<Tool[]> {
    const tools = await this.list("tools/list", (client, params, options) =>
      client.listTools(params, options).then((page) => ({ items: page.tools, nextCursor: page.nextCursor })),
    );
    const { allowedTools, disallowedTools } = this.config;
    return tools.filter(
      (t) =>
        (allowedTools === undefined || allowedTools.includes(t.name)) && !disallowedTools.includes(t.name),
    );
  }

  /**
   * The server's resources (every page), or none when it does not declare the `resources` capability; cached
   * for {@link TOOL_LIST_TTL_MS}.
   * @throws McpUpstreamError when the server cannot be reached or does not answer in time.
   */
  async resources(): Promise<Resource[]> {
    if ((await this.connected()).getServerCapabilities()?.resources === undefined) return [];
    return this.list("resources/list", (client, params, options) =>
      client
        .listResources(params, options)
        .then((page) => ({ items: page.resources, nextCursor: page.nextCursor })),
    );
  }

  /**
   * The server's resource templates (every page of `resources/templates/list`), or none when it does not
   * declare the `resources` capability; cached for {@link TOOL_LIST_TTL_MS}.
   * @throws McpUpstreamError when the server cannot be reached or does not answer in time.
   */
  async resourceTemplates(): Promise<ResourceTemplate[]> {
    if ((await this.connected()).getServerCapabilities()?.resources === undefined) return [];
    return this.list("resources/templates/list", (client, params, options) =>
      client
        .listResourceTemplates(params, options)
        .then((page) => ({ items: page.resourceTemplates, nextCursor: page.nextCursor })),
    );
  }

  /**
   * The server's prompts (every page), or none when it does not declare the `prompts` capability; cached for
   * {@link TOOL_LIST_TTL_MS}.
   * @throws McpUpstreamError when the server cannot be reached or does not answer in time.
   */
  async prompts(): Promise<Prompt[]> {
    if ((await this.connected()).getServerCapabilities()?.prompts === undefined) return [];
    return this.list("prompts/list", (client, params, options) =>
      client
        .listPrompts(params, options)
        .then((page) => ({ items: page.prompts, nextCursor: page.nextCursor })),
    );
  }

  /**
   * Reads one upstream resource by its URI (as the server lists it).
   * @throws McpUpstreamError unreachable, timed out, or a JSON-RPC error from the server.
   */
  async readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    const client = await this.connected();
    return this.guarded("resources/read", () => client.readResource({ uri }, this.options(signal)));
  }

  /**
   * Gets one upstream prompt (its own name, without the server prefix) with its arguments.
   * @throws McpUpstreamError unreachable, timed out, or a JSON-RPC error from the server.
   */
  async getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    signal?: AbortSignal,
  ): Promise<GetPromptResult> {
    const client = await this.connected();
    return this.guarded("prompts/get", () =>
      client.getPrompt({ name, ...(args === undefined ? {} : { arguments: args }) }, this.options(signal)),
    );
  }

  /** Every page of a list method, cached for {@link TOOL_LIST_TTL_MS}. */
  private async list<M extends keyof Listings>(
    method: M,
    page: (
      client: Client,
      params: { cursor?: string },
      options: { timeout: number },
    ) => Promise<{ items: Listings[M]; nextCursor?: string | undefined }>,
  ): Promise<Listings[M]> {
    const cached = this.listed.get(method);
    if (cached !== undefined && performance.now() - cached.at < TOOL_LIST_TTL_MS) {
      return cached.items as Listings[M];
    }
    const client = await this.connected();
    const items: unknown[] = [];
    let cursor: string | undefined;
    do {
      const params = cursor === undefined ? {} : { cursor };
      const next = await this.guarded(method, () => page(client, params, { timeout: this.config.timeoutMs }));
      items.push(...next.items);
      cursor = next.nextCursor;
    } while (cursor !== undefined && items.length < MAX_LISTED);
    this.listed.set(method, { at: performance.now(), items });
    return items as Listings[M];
  }

  /** Request options: the server's timeout, and the caller's abort. */
  private options(signal: AbortSignal | undefined): { timeout: number; signal?: AbortSignal } {
    return { timeout: this.config.timeoutMs, ...(signal === undefined ? {} : { signal }) };
  }

  /**
   * Calls one upstream tool (its own name, without the server prefix).
   * @param signal aborted when the caller goes away.
   * @throws McpUpstreamError unreachable, timed out, or a JSON-RPC error from the server.
   */
  async callTool(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    const client = await this.connected();
    const result = await this.guarded("tools/call", () =>
      client.callTool({ name: tool, arguments: args }, undefined, this.options(signal)),
    );
    return result as CallToolResult;
  }

  /** Closes the connection (a stdio server's process ends). Never throws. */
  async close(): Promise<void> {
    const pending = this.client;
    this.client = undefined;
    if (pending === undefined) return;
    try {
      await (await pending).close();
    } catch {
      // Not connected: nothing to close.
    }
  }

  /** The connected client, connecting (again) when there is none. */
  private connected(): Promise<Client> {
    if (this.client !== undefined) return this.client;
    const attempt = this.connect();
    this.client = attempt;
    attempt.catch(() => {
      if (this.client === attempt) this.client = undefined;
    });
    return attempt;
  }

  private async connect(): Promise<Client> {
    const client = new Client(CLIENT_INFO);
    client.onclose = () => {
      this.client = undefined;
      this.listed.clear();
    };
    client.onerror = (error) =>
      this.log.debug({ mcp_server: this.config.name, err: this.redact(error.message) }, "MCP upstream");
    try {
      await this.guarded("connect", () =>
        client.connect(this.transport(), { timeout: this.config.timeoutMs }),
      );
    } catch (error) {
      // A stdio child that started but did not initialise is ended.
      client.close().catch(() => undefined);
      throw error;
    }
    return client;
  }

  private transport(): Transport {
    const t = this.config.transport;
    if (t.kind === "stdio") {
      const transport = new StdioClientTransport({
        command: t.command,
        args: t.args,
        env: { ...getDefaultEnvironment(), ...t.env },
        stderr: "pipe",
      });
      transport.stderr?.on("data", (chunk: Buffer) =>
        this.log.debug(
          { mcp_server: this.config.name, stderr: this.redact(chunk.toString("utf8")).slice(0, 500) },
          "MCP stdio",
        ),
      );
      return transport;
    }
    const requestInit = { headers: t.headers };
    return t.kind === "sse"
      ? new SSEClientTransport(new URL(t.url), { requestInit })
      : new StreamableHTTPClientTransport(new URL(t.url), { requestInit });
  }

  /** Runs one upstream step, turning its failures into {@link McpUpstreamError}s. */
  private async guarded<T>(step: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      const name = this.config.name;
      this.log.debug(
        { mcp_server: name, step, err: this.redact(String((error as Error).message)) },
        "MCP upstream failed",
      );
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        throw new McpUpstreamError(
          "timeout",
          `MCP server ${name} did not answer ${step} within ${this.config.timeoutMs / 1000} s.`,
        );
      }
      if (error instanceof McpError && step !== "connect") {
        // The upstream's own JSON-RPC error: its message is the server's, for the caller.
        throw new McpUpstreamError("upstream_error", `MCP server ${name}: ${error.message}`);
      }
      throw new McpUpstreamError("unreachable", `MCP server ${name} is unreachable (${step} failed).`);
    }
  }
}

/** A function that replaces every credential of `config` in a text by `[redacted]` (longest first). */
function redactor(config: McpServerConfig): (text: string) => string {
  const t = config.transport;
  const secrets = new Set<string>();
  const add = (value: string) => {
    if (value.length >= 4) secrets.add(value);
  };
  if (t.kind === "stdio") {
    for (const value of Object.values(t.env)) add(value);
  } else {
    add(t.url);
    const url = new URL(t.url);
    for (const value of url.searchParams.values()) add(value);
    add(decodeURIComponent(url.username));
    add(decodeURIComponent(url.password));
    for (const value of Object.values(t.headers)) {
      add(value);
      for (const word of value.split(/\s+/)) add(word);
    }
  }
  const ordered = [...secrets].sort((a, b) => b.length - a.length);
  return (text) => ordered.reduce((out, secret) => out.replaceAll(secret, "[redacted]"), text);
}
