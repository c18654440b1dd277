/**
 * What tools, resources and prompts share on `/mcp`: the upstream servers a caller may reach
 * (`permissions.ts`), listed in parallel with a server that fails left out (and logged), and LiteLLM's
 * server-prefixed names `<server>-<name>` (docs.litellm.ai/docs/mcp: "LiteLLM namespaces multiple MCP servers
 * by prefixing each tool name with its MCP server name"; the gateway names prompts and resources the same way).
 */
import type { FastifyBaseLogger } from "fastify";
import type { AuthContext } from "../auth/types.js";
import { mayReachServer } from "./permissions.js";
import { type McpUpstream, McpUpstreamError } from "./upstream.js";

/** The separator between a server's name and its tool's (LiteLLM's). */
export const TOOL_SEPARATOR = "-";

/** `<server>-<name>`: the name a caller sees. */
export const prefixedName = (upstream: McpUpstream, name: string): string =>
  `${upstream.config.name}${TOOL_SEPARATOR}${name}`;

/**
 * What `list` answers for every server `auth` may reach, in the order the servers are declared. A server whose
 * listing fails answers nothing (a warning names it and the method), so the others still answer.
 * @param method the MCP method, for the log line (`tools/list`, `resources/list`, `prompts/list`).
 */
export async function listReachable<T>(
  upstreams: readonly McpUpstream[],
  auth: AuthContext,
  log: FastifyBaseLogger,
  method: string,
  list: (upstream: McpUpstream) => Promise<T[]>,
): Promise<Array<{ upstream: McpUpstream; items: T[] }>> {
  const reachable = upstreams.filter((u) => mayReachServer(auth, u.config));
  return Promise.all(
    reachable.map(async (upstream) => {
      try {
        return { upstream, items: await list(upstream) };
      } catch (error) {
        log.warn(
          { mcp_server: upstream.config.name, err: (error as Error).message },
          `MCP server left out of ${method}`,
        );
        return { upstream, items: [] };
      }
    }),
  );
}

/**
 * The servers `auth` may reach whose prefix `name` carries, each with the name without its prefix (two servers
 * may match: `a` with `b-c` and `a-b` with `c`; the first declared is tried first).
 */
export function byPrefix(
  upstreams: readonly McpUpstream[],
  auth: AuthContext,
  name: string,
): Array<{ upstream: McpUpstream; own: string }> {
  return upstreams
    .filter((u) => name.startsWith(prefixedName(u, "")) && mayReachServer(auth, u.config))
    .map((upstream) => ({ upstream, own: name.slice(prefixedName(upstream, "").length) }));
}

/**
 * Runs an upstream request for a caller: an upstream failure becomes the JSON-RPC error the caller gets
 * (`McpUpstreamError.toMcpError`: InternalError with its reason); anything else is rethrown as it is.
 */
export async function forCaller<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw error instanceof McpUpstreamError ? error.toMcpError() : error;
  }
}
