/**
 * The tools `/mcp` offers a caller: every tool of every upstream server the caller may reach, under LiteLLM's
 * server-prefixed name `<server>-<tool>` (docs.litellm.ai/docs/mcp: "LiteLLM namespaces multiple MCP servers by
 * prefixing each tool name with its MCP server name"), narrowed by the caller's permissions
 * (`permissions.ts`). A server that is down is left out of a listing (and logged), the others still answer.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyBaseLogger } from "fastify";
import type { AuthContext } from "../auth/types.js";
import { mayReachServer, mayUseTool } from "./permissions.js";
import type { McpUpstream } from "./upstream.js";

/** The separator between a server's name and its tool's (LiteLLM's). */
export const TOOL_SEPARATOR = "-";

/** One tool as offered to a caller. */
export interface OfferedTool {
  /** `<server>-<tool>`: the name the caller lists and calls. */
  name: string;
  upstream: McpUpstream;
  /** The upstream's own definition (its name without the prefix). */
  tool: Tool;
}

/**
 * The tools `auth` may use, keyed by their prefixed names. Upstreams are listed in parallel (their own tool
 * lists are cached, `upstream.ts`); one that fails is skipped with a warning.
 */
export async function offeredTools(
  upstreams: readonly McpUpstream[],
  auth: AuthContext,
  log: FastifyBaseLogger,
): Promise<Map<string, OfferedTool>> {
  const reachable = upstreams.filter((u) => mayReachServer(auth, u.config));
  const listed = await Promise.all(
    reachable.map(async (upstream) => {
      try {
        return { upstream, tools: await upstream.tools() };
      } catch (error) {
        log.warn(
          { mcp_server: upstream.config.name, err: (error as Error).message },
          "MCP server left out of tools/list",
        );
        return { upstream, tools: [] };
      }
    }),
  );
  const offered = new Map<string, OfferedTool>();
  for (const { upstream, tools } of listed) {
    for (const tool of tools) {
      if (!mayUseTool(auth, upstream.config, tool.name)) continue;
      const name = `${upstream.config.name}${TOOL_SEPARATOR}${tool.name}`;
      // Two servers whose prefixed names collide ("a" with tool "b-c", "a-b" with tool "c"): the first declared wins.
      if (!offered.has(name)) offered.set(name, { name, upstream, tool });
    }
  }
  return offered;
}

/** The tool as the caller lists it: the prefixed name, the rest of the upstream's definition as it came. */
export function listedTool(offered: OfferedTool): Tool {
  return { ...offered.tool, name: offered.name };
}

/**
 * The tool a `tools/call` names, when the caller may use it: the prefix must be a server the caller may reach
 * and the tool one it may use there. Only that server is listed (not every server the caller may reach).
 */
export async function findTool(
  upstreams: readonly McpUpstream[],
  auth: AuthContext,
  name: string,
): Promise<OfferedTool | undefined> {
  const candidates = upstreams.filter(
    (u) => name.startsWith(`${u.config.name}${TOOL_SEPARATOR}`) && mayReachServer(auth, u.config),
  );
  for (const upstream of candidates) {
    const own = name.slice(upstream.config.name.length + TOOL_SEPARATOR.length);
    if (!mayUseTool(auth, upstream.config, own)) continue;
    const tool = (await upstream.tools()).find((t) => t.name === own);
    if (tool !== undefined) return { name, upstream, tool };
  }
  return undefined;
}
