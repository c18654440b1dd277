/**
 * The tools `/mcp` offers a caller: every tool of every upstream server the caller may reach, under LiteLLM's
 * server-prefixed name `<server>-<tool>` (`reachable.ts`), narrowed by the caller's permissions
 * (`permissions.ts`). A server that is down is left out of a listing (and logged), the others still answer.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyBaseLogger } from "fastify";
import type { AuthContext } from "../auth/types.js";
import { mayUseTool } from "./permissions.js";
import { byPrefix, listReachable, prefixedName } from "./reachable.js";
import type { McpUpstream } from "./upstream.js";

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
  const listed = await listReachable(upstreams, auth, log, "tools/list", (u) => u.tools());
  const offered = new Map<string, OfferedTool>();
  for (const { upstream, items } of listed) {
    for (const tool of items) {
      if (!mayUseTool(auth, upstream.config, tool.name)) continue;
      const name = prefixedName(upstream, tool.name);
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
  for (const { upstream, own } of byPrefix(upstreams, auth, name)) {
    if (!mayUseTool(auth, upstream.config, own)) continue;
    const tool = (await upstream.tools()).find((t) => t.name === own);
    if (tool !== undefined) return { name, upstream, tool };
  }
  return undefined;
}
