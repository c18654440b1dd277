/**
 * Validation of admin requests with the schemas of `@platform/admin-api` (the console's client uses the same
 * ones): a refused request is a 400 `invalid_request_error` naming the field.
 */
import type { z } from "zod";
import { GatewayError, invalidRequest } from "../../errors/gateway-error.js";

/**
 * The path (`metadata.note`, `models.2`) of the first string, or object key, in `data` that holds a NUL
 * character (U+0000), or undefined. Postgres stores neither in `text` nor in `jsonb`.
 */
export function nulCharacterAt(data: unknown, path: string[] = []): string[] | undefined {
  if (typeof data === "string") return data.includes("\u0000") ? path : undefined;
  if (Array.isArray(data)) {
    for (let i = 0; i < data.length; i += 1) {
      const found = nulCharacterAt(data[i], [...path, String(i)]);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof data === "object" && data !== null) {
    for (const [key, value] of Object.entries(data)) {
      if (key.includes("\u0000")) return [...path, key.replaceAll("\u0000", "\\u0000")];
      const found = nulCharacterAt(value, [...path, key]);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * Parses `data` (a body or a query string) with `schema`.
 * @throws GatewayError 400 whose `param` is the first invalid field's path (`max_budget`, `keys.0`); a NUL
 *   character anywhere (value or key) is refused before the schema runs, naming its path.
 */
export function parse<T>(schema: z.ZodType<T>, data: unknown): T {
  const nul = nulCharacterAt(data);
  if (nul !== undefined) {
    const path = nul.join(".");
    throw invalidRequest(
      path === ""
        ? "Invalid request: NUL characters (\\u0000) are not accepted."
        : `Invalid ${path}: NUL characters (\\u0000) are not accepted.`,
      path || null,
    );
  }
  const result = schema.safeParse(data ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue === undefined ? "" : issue.path.map(String).join(".");
  const message = issue?.message ?? "invalid request";
  throw invalidRequest(
    path === "" ? `Invalid request body: ${message}` : `Invalid ${path}: ${message}`,
    path || null,
  );
}

/** 404 `not_found_error` about one request field. */
export function notFound(message: string, param: string): GatewayError {
  return new GatewayError(404, message, { type: "not_found_error", param });
}

/**
 * Refuses an `object_permission` that grants an MCP server the config does not declare (a typo would otherwise
 * grant nothing, silently).
 * @throws GatewayError 400 whose `param` is the entry (`object_permission.mcp_servers.0`,
 *   `object_permission.mcp_tool_permissions.<name>`), naming the declared servers.
 */
export function assertMcpServers(
  permission:
    | { mcp_servers?: readonly string[]; mcp_tool_permissions?: Record<string, unknown> }
    | null
    | undefined,
  declared: readonly string[],
): void {
  if (permission == null) return;
  const known = new Set(declared);
  const named: Array<[string, string]> = [
    ...(permission.mcp_servers ?? []).map((name, i): [string, string] => [name, `mcp_servers.${i}`]),
    ...Object.keys(permission.mcp_tool_permissions ?? {}).map((name): [string, string] => [
      name,
      `mcp_tool_permissions.${name}`,
    ]),
  ];
  for (const [name, at] of named) {
    if (known.has(name)) continue;
    const which =
      declared.length === 0 ? "the config declares none" : `the config declares ${declared.join(", ")}`;
    throw invalidRequest(
      `Invalid object_permission.${at}: '${name.slice(0, 64)}' is not an MCP server of this gateway (${which} under mcp_servers:).`,
      `object_permission.${at}`,
    );
  }
}
