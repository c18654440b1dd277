/**
 * Resources through `/mcp` (MCP `resources/list`, `resources/read`), passed through from the upstream servers
 * that declare the `resources` capability and that the caller may reach (`permissions.ts`: a server the caller
 * may not reach shows none). A resource is listed with its name server-prefixed (`<server>-<name>`, like tools)
 * and its `uri` unchanged, so a client reads it by the URI it listed; two servers listing the same URI: the first
 * declared owns it. Resource templates (`resources/templates/list`) are passed through the same way (name
 * prefixed, `uriTemplate` unchanged); a URI no listed resource has is read from the first reachable server one
 * of whose templates matches it (RFC 6570, the SDK's `UriTemplate`). Subscriptions are not offered: `/mcp` is
 * stateless and has no stream to send `notifications/resources/updated` on.
 */
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import type { ReadResourceResult, Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyBaseLogger } from "fastify";
import type { AuthContext } from "../auth/types.js";
import { admittedRead, type ReadDeps } from "./admitted-read.js";
import { listReachable, prefixedName } from "./reachable.js";
import type { McpUpstream } from "./upstream.js";

/** MCP's JSON-RPC error code for a resource that does not exist (specification, "Resources": error handling). */
export const RESOURCE_NOT_FOUND = -32002;

/** The resources `auth` may read, each named `<server>-<name>`; a server that fails is left out (logged). */
export async function listResources(
  upstreams: readonly McpUpstream[],
  auth: AuthContext,
  log: FastifyBaseLogger,
): Promise<Resource[]> {
  const listed = await listReachable(upstreams, auth, log, "resources/list", (u) => u.resources());
  const seen = new Set<string>();
  const resources: Resource[] = [];
  for (const { upstream, items } of listed) {
    for (const resource of items) {
      if (seen.has(resource.uri)) continue;
      seen.add(resource.uri);
      resources.push({ ...resource, name: prefixedName(upstream, resource.name) });
    }
  }
  return resources;
}

/** The resource templates `auth` may read from, each named `<server>-<name>`; a server that fails is left out. */
export async function listResourceTemplates(
  upstreams: readonly McpUpstream[],
  auth: AuthContext,
  log: FastifyBaseLogger,
): Promise<ResourceTemplate[]> {
  const listed = await listReachable(upstreams, auth, log, "resources/templates/list", (u) =>
    u.resourceTemplates(),
  );
  return listed.flatMap(({ upstream, items }) =>
    items.map((template) => ({ ...template, name: prefixedName(upstream, template.name) })),
  );
}

/** Whether `uri` is one `template` (RFC 6570) expands to; a template that does not parse matches nothing. */
function matches(template: ResourceTemplate, uri: string): boolean {
  try {
    return new UriTemplate(template.uriTemplate).match(uri) !== null;
  } catch {
    return false;
  }
}

/**
 * Reads the resource at `uri` from the reachable server that lists it (or, when none does, whose resource
 * template matches it), admitted against the caller's rate limits
 * (`admitted-read.ts`).
 * @throws McpError {@link RESOURCE_NOT_FOUND} when no server the caller may reach lists it or has a template
 *   matching it (nothing is asked upstream but the lists, nothing counted); -32003 when a rate limit or budget refuses it; InternalError when the owning
 *   server is unreachable, slow or fails.
 */
export async function readResource(
  deps: ReadDeps,
  auth: AuthContext,
  log: FastifyBaseLogger,
  uri: string,
  signal?: AbortSignal,
): Promise<ReadResourceResult> {
  const listed = await listReachable(deps.upstreams, auth, log, "resources/list", (u) => u.resources());
  let owner: { upstream: McpUpstream } | undefined = listed.find(({ items }) =>
    items.some((r) => r.uri === uri),
  );
  if (owner === undefined) {
    const templates = await listReachable(deps.upstreams, auth, log, "resources/templates/list", (u) =>
      u.resourceTemplates(),
    );
    owner = templates.find(({ items }) => items.some((t) => matches(t, uri)));
  }
  if (owner === undefined) {
    throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri.slice(0, 200)}`, {
      uri: uri.slice(0, 200),
    });
  }
  return admittedRead(deps, auth, owner.upstream, () => owner.upstream.readResource(uri, signal));
}
