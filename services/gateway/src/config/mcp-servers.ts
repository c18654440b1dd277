/**
 * The `mcp_servers:` section of the gateway's config, in LiteLLM's shape (docs.litellm.ai/docs/mcp,
 * "Adding your MCP" → config.yaml; /docs/mcp_control; /docs/mcp_cost):
 *
 *     mcp_servers:
 *       github:                              # the server's name: tools are listed as github-<tool>
 *         url: https://api.githubcopilot.com/mcp
 *         transport: http                    # http (Streamable HTTP, default) | sse
 *         auth_type: bearer_token            # none | bearer_token | api_key | basic | token | authorization
 *         auth_value: os.environ/GITHUB_TOKEN
 *         static_headers: {X-Org: os.environ/GITHUB_ORG}
 *         allow_all_keys: false              # true: every key may reach it (default: only keys granted it)
 *         allowed_tools: [search_issues]     # optional: only these tools are offered
 *         mcp_info:
 *           mcp_server_cost_info: {default_cost_per_query: 0.001, tool_name_to_cost_per_query: {search_issues: 0.01}}
 *       files:
 *         transport: stdio                   # started by the gateway
 *         command: npx
 *         args: ["-y", "@modelcontextprotocol/server-filesystem", "/data"]
 *         env: {TOKEN: os.environ/FILES_TOKEN}
 *
 * `os.environ/VAR` references are resolved in `url`, `auth_value`, `static_headers` (`headers`) and `env`
 * values; an unset one is a start-up error naming the variable and its uses, as for `model_list`. Values are
 * never echoed in a message (they hold credentials).
 */
import { z } from "zod";
import { type EnvRefs, envRef } from "./env-refs.js";
import type { KeySet } from "./litellm-keys.js";
import { describe, isMapping, type Path } from "./messages.js";
import type { Report } from "./report.js";

/** The default limit of a tool's result (`max_result_bytes`), bytes of JSON: 1 MiB (`mcp/result-size.ts`). */
export const DEFAULT_MAX_RESULT_BYTES = 1_048_576;

/** How the gateway reaches one upstream MCP server. */
export type McpTransport =
  | { kind: "http" | "sse"; url: string; headers: Record<string, string> }
  | { kind: "stdio"; command: string; args: string[]; env: Record<string, string> };

/** One declared upstream MCP server, validated and with its `os.environ/` references resolved. */
export interface McpServerConfig {
  /** The key under `mcp_servers` (LiteLLM's `server_name`): the prefix of its tools' names. */
  name: string;
  transport: McpTransport;
  /** `allow_all_keys`: every key may reach it, without a grant in its `object_permission`. */
  allowAllKeys: boolean;
  /** `allowed_tools`: the only upstream tools offered (undefined: all). */
  allowedTools: string[] | undefined;
  /** `disallowed_tools`: upstream tools never offered. */
  disallowedTools: string[];
  /** USD per tools/call: `mcp_info.mcp_server_cost_info.default_cost_per_query` (default 0). */
  defaultCostPerQuery: number;
  /** USD per tools/call of one upstream tool (`tool_name_to_cost_per_query`), over the default. */
  toolCostPerQuery: Record<string, number>;
  /** Longest a tools/call (or a listing) may take upstream, ms (`timeout` seconds; default 60 s). */
  timeoutMs: number;
  description: string | undefined;
  /** Largest tool result passed on, bytes of JSON (`max_result_bytes`, the gateway's own key; default 1 MiB). */
  maxResultBytes: number;
}

/** The default upstream timeout of an MCP request, ms. */
export const DEFAULT_MCP_TIMEOUT_MS = 60_000;

/** A server name: letters, digits, `_`, `.` and `-` (SEP-986's tool-name characters), at most 64. */
const SERVER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Keys of one `mcp_servers.<name>` entry. */
export const mcpServerKeys: KeySet = {
  used: [
    "url",
    "transport",
    "auth_type",
    "auth_value",
    "static_headers",
    "headers",
    "command",
    "args",
    "env",
    "allow_all_keys",
    "allowed_tools",
    "disallowed_tools",
    "mcp_info",
    "description",
    "timeout",
    "max_result_bytes",
  ],
  ignored: {
    alias: "tools are listed under the server's name",
    server_name: "the key under mcp_servers is the server's name",
    spec_version: "the protocol version is negotiated with the upstream",
    extra_headers: "client headers are not forwarded to MCP servers",
    available_on_public_internet: "",
    mcp_access_groups: "grant servers to keys in their object_permission.mcp_servers",
    access_groups: "grant servers to keys in their object_permission.mcp_servers",
  },
  unsupported: {
    authorization_url: "OAuth upstreams are not supported; use auth_type bearer_token with a token",
    token_url: "OAuth upstreams are not supported; use auth_type bearer_token with a token",
    registration_url: "OAuth upstreams are not supported; use auth_type bearer_token with a token",
    client_id: "OAuth upstreams are not supported; use auth_type bearer_token with a token",
    client_secret: "OAuth upstreams are not supported; use auth_type bearer_token with a token",
  },
};

const usd = z.number().nonnegative();
const stringMap = z.record(z.string(), z.string());
const entrySchema = z.object({
  url: z.url({ protocol: /^https?$/ }).optional(),
  transport: z.enum(["http", "sse", "stdio"]).optional(),
  auth_type: z.enum(["none", "bearer_token", "api_key", "basic", "token", "authorization"]).optional(),
  auth_value: z.string().min(1).optional(),
  static_headers: stringMap.optional(),
  headers: stringMap.optional(),
  command: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  env: stringMap.optional(),
  allow_all_keys: z.boolean().optional(),
  allowed_tools: z.array(z.string().min(1)).optional(),
  disallowed_tools: z.array(z.string().min(1)).optional(),
  mcp_info: z
    .looseObject({
      mcp_server_cost_info: z
        .object({
          default_cost_per_query: usd.nullable().optional(),
          tool_name_to_cost_per_query: z.record(z.string(), usd).optional(),
        })
        .optional(),
    })
    .optional(),
  description: z.string().optional(),
  timeout: z.number().positive().optional(),
  max_result_bytes: z.number().int().positive().optional(),
});
type Entry = z.output<typeof entrySchema>;

/**
 * Reads `mcp_servers`: key checks, the schema, then each entry's transport and credentials.
 * Problems go to `report` (the config is then refused); nothing is thrown.
 * @returns the servers without problems, in file order.
 */
export function readMcpServers(report: Report, refs: EnvRefs, value: unknown): McpServerConfig[] {
  if (value === undefined || value === null) return [];
  if (!isMapping(value)) {
    report.problem(
      ["mcp_servers"],
      `expected a mapping of server name to its settings, got ${describe(value)}`,
    );
    return [];
  }
  const servers: McpServerConfig[] = [];
  for (const [name, raw] of Object.entries(value)) {
    const at = ["mcp_servers", name];
    if (!SERVER_NAME.test(name)) {
      report.problem(at, `MCP server name "${name}" must be 1-64 letters, digits, "_", "." or "-"`);
      continue;
    }
    if (!isMapping(raw)) {
      report.problem(
        at,
        `expected a mapping (url and transport, or command for stdio), got ${describe(raw)}`,
      );
      continue;
    }
    report.checkKeys(raw, at, mcpServerKeys);
    const known = Object.fromEntries(Object.entries(raw).filter(([k]) => mcpServerKeys.used.includes(k)));
    const resolved = resolveRefs(refs, known, at);
    const entry = report.parse(entrySchema, resolved, at);
    if (entry === undefined) continue;
    const transport = readTransport(report, entry, at);
    if (transport === undefined) continue;
    const cost = entry.mcp_info?.mcp_server_cost_info;
    servers.push({
      name,
      transport,
      allowAllKeys: entry.allow_all_keys ?? false,
      allowedTools: entry.allowed_tools,
      disallowedTools: entry.disallowed_tools ?? [],
      defaultCostPerQuery: cost?.default_cost_per_query ?? 0,
      toolCostPerQuery: cost?.tool_name_to_cost_per_query ?? {},
      timeoutMs: entry.timeout === undefined ? DEFAULT_MCP_TIMEOUT_MS : entry.timeout * 1000,
      description: entry.description,
      maxResultBytes: entry.max_result_bytes ?? DEFAULT_MAX_RESULT_BYTES,
    });
  }
  return servers;
}

/** The entry with `os.environ/VAR` replaced in `url`, `auth_value` and the values of the header and env maps. */
function resolveRefs(refs: EnvRefs, entry: Record<string, unknown>, at: Path): Record<string, unknown> {
  const one = (v: unknown, path: Path): unknown => {
    const name = envRef(v);
    if (name === undefined) return v;
    const found = refs.lookup(name);
    if (found === undefined) refs.recordUnset(name, path, undefined);
    // An unset reference is reported once by reportUnset; a placeholder keeps the schema from adding a problem.
    return found ?? "unset";
  };
  const out: Record<string, unknown> = { ...entry };
  for (const key of ["url", "auth_value"] as const) {
    if (key in out) out[key] = one(out[key], [...at, key]);
  }
  for (const key of ["static_headers", "headers", "env"] as const) {
    const map = out[key];
    if (!isMapping(map)) continue;
    out[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, one(v, [...at, key, k])]));
  }
  if (out.url === "unset") out.url = "http://unset.invalid/";
  return out;
}

/** The transport of a valid entry: stdio needs `command`, http and sse a `url`; auth becomes a header. */
function readTransport(report: Report, entry: Entry, at: Path): McpTransport | undefined {
  const kind = entry.transport ?? (entry.command !== undefined ? "stdio" : "http");
  if (kind === "stdio") {
    if (entry.command === undefined) {
      report.problem(
        [...at, "command"],
        "a stdio MCP server needs command (and args) to start it; it is missing",
      );
      return undefined;
    }
    if (entry.url !== undefined) report.warn([...at, "url"], "url is ignored for a stdio server");
    return { kind, command: entry.command, args: entry.args ?? [], env: entry.env ?? {} };
  }
  if (entry.url === undefined) {
    report.problem([...at, "url"], `an MCP server with transport ${kind} needs url; it is missing`);
    return undefined;
  }
  const headers: Record<string, string> = { ...entry.headers, ...entry.static_headers };
  const auth = authHeader(entry);
  if (auth === null) {
    report.problem([...at, "auth_value"], `auth_type ${entry.auth_type} needs auth_value (os.environ/VAR)`);
    return undefined;
  }
  if (auth !== undefined) headers[auth.name] = auth.value;
  return { kind, url: entry.url, headers };
}

/**
 * The header LiteLLM sends for an `auth_type` (docs.litellm.ai/docs/mcp, "MCP auth"): `Authorization: Bearer
 * <v>`, `X-API-Key: <v>`, `Authorization: Basic <v>`, `Authorization: token <v>`, or `Authorization: <v>` as is.
 * Undefined for none; null when the value is missing.
 */
function authHeader(entry: Entry): { name: string; value: string } | undefined | null {
  const type = entry.auth_type ?? "none";
  if (type === "none") return undefined;
  const value = entry.auth_value;
  if (value === undefined) return null;
  switch (type) {
    case "bearer_token":
      return { name: "Authorization", value: `Bearer ${value}` };
    case "api_key":
      return { name: "X-API-Key", value };
    case "basic":
      return { name: "Authorization", value: `Basic ${value}` };
    case "token":
      return { name: "Authorization", value: `token ${value}` };
    case "authorization":
      return { name: "Authorization", value };
  }
}
