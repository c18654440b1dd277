/**
 * Prompts through `/mcp` (MCP `prompts/list`, `prompts/get`), passed through from the upstream servers that
 * declare the `prompts` capability and that the caller may reach (`permissions.ts`: a server the caller may not
 * reach shows none), under server-prefixed names `<server>-<prompt>` like tools.
 */
import { ErrorCode, type GetPromptResult, McpError, type Prompt } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyBaseLogger } from "fastify";
import type { AuthContext } from "../auth/types.js";
import { admittedRead, type ReadDeps } from "./admitted-read.js";
import { byPrefix, forCaller, listReachable, prefixedName } from "./reachable.js";
import type { McpUpstream } from "./upstream.js";

/** The prompts `auth` may get, each named `<server>-<prompt>`; a server that fails is left out (logged). */
export async function listPrompts(
  upstreams: readonly McpUpstream[],
  auth: AuthContext,
  log: FastifyBaseLogger,
): Promise<Prompt[]> {
  const listed = await listReachable(upstreams, auth, log, "prompts/list", (u) => u.prompts());
  const prompts = new Map<string, Prompt>();
  for (const { upstream, items } of listed) {
    for (const prompt of items) {
      const name = prefixedName(upstream, prompt.name);
      // Colliding prefixed names: the first declared server wins, as for tools.
      if (!prompts.has(name)) prompts.set(name, { ...prompt, name });
    }
  }
  return [...prompts.values()];
}

/**
 * Gets the prompt the prefixed `name` names, with its arguments, from its server, admitted against the caller's
 * rate limits (`admitted-read.ts`).
 * @throws McpError InvalidParams "Unknown prompt" when no server the caller may reach offers it (nothing is
 *   asked upstream but its list, nothing counted); -32003 when a rate limit or budget refuses it; InternalError
 *   when the server is unreachable, slow or fails.
 */
export async function getPrompt(
  deps: ReadDeps,
  auth: AuthContext,
  name: string,
  args: Record<string, string> | undefined,
  signal?: AbortSignal,
): Promise<GetPromptResult> {
  for (const { upstream, own } of byPrefix(deps.upstreams, auth, name)) {
    const prompts = await forCaller(() => upstream.prompts());
    if (prompts.some((p) => p.name === own)) {
      return admittedRead(deps, auth, upstream, () => upstream.getPrompt(own, args, signal));
    }
  }
  throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${name.slice(0, 200)}`);
}
