/**
 * `mcp_servers:` in the config (LiteLLM's shape): what the loader makes of a valid section, and the start-up
 * messages of a wrong one (each names the server, the key and the line, never a credential's value).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadModelConfig } from "../../../../services/gateway/src/config/load-model-config.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;

function load(text: string, env: NodeJS.ProcessEnv = {}) {
  counter += 1;
  const path = join(dir, `config-${counter}.yaml`);
  writeFileSync(path, text);
  return loadModelConfig(path, env);
}

function problems(text: string, env: NodeJS.ProcessEnv = {}): string {
  try {
    load(text, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error("expected the config to be refused");
}

describe("mcp_servers", () => {
  it("reads http, sse and stdio servers, resolving os.environ/ credentials into the auth header", () => {
    const config = load(
      `
mcp_servers:
  github:
    url: https://mcp.example.com/mcp
    auth_type: bearer_token
    auth_value: os.environ/GH_TOKEN
    static_headers: {X-Org: os.environ/GH_ORG}
    allow_all_keys: true
    allowed_tools: [search]
    mcp_info:
      mcp_server_cost_info: {default_cost_per_query: 0.002, tool_name_to_cost_per_query: {search: 0.01}}
  legacy:
    url: http://legacy:8080/sse
    transport: sse
    auth_type: api_key
    auth_value: os.environ/LEGACY_KEY
  files:
    command: npx
    args: ["-y", "server-filesystem", "/data"]
    env: {FILES_TOKEN: os.environ/FILES_TOKEN}
`,
      { GH_TOKEN: "ghp_secret", GH_ORG: "acme", LEGACY_KEY: "k-1", FILES_TOKEN: "f-1" },
    );
    const [github, legacy, files] = config.mcpServers ?? [];
    expect(github).toMatchObject({
      name: "github",
      transport: {
        kind: "http",
        url: "https://mcp.example.com/mcp",
        headers: { Authorization: "Bearer ghp_secret", "X-Org": "acme" },
      },
      allowAllKeys: true,
      allowedTools: ["search"],
      defaultCostPerQuery: 0.002,
      toolCostPerQuery: { search: 0.01 },
      timeoutMs: 60_000,
      maxResultBytes: 1_048_576,
    });
    expect(legacy?.transport).toEqual({
      kind: "sse",
      url: "http://legacy:8080/sse",
      headers: { "X-API-Key": "k-1" },
    });
    expect(legacy?.allowAllKeys).toBe(false);
    expect(files?.transport).toEqual({
      kind: "stdio",
      command: "npx",
      args: ["-y", "server-filesystem", "/data"],
      env: { FILES_TOKEN: "f-1" },
    });
  });

  it("names an unset credential variable and its use, without any value", () => {
    const message = problems(
      `
mcp_servers:
  github:
    url: https://mcp.example.com/mcp
    auth_type: bearer_token
    auth_value: os.environ/GH_TOKEN
`,
    );
    expect(message).toMatch(
      /environment variable GH_TOKEN is unset.*mcp_servers\.github\.auth_value \(line 6/,
    );
  });

  it("refuses a server without url or command, a bad transport, OAuth keys and a missing auth_value, each with its place", () => {
    const message = problems(
      `
mcp_servers:
  nourl:
    transport: http
  nocommand:
    transport: stdio
  badtransport:
    url: https://x.example/mcp
    transport: websocket
  oauth:
    url: https://x.example/mcp
    client_secret: os.environ/SECRET
  noauth:
    url: https://x.example/mcp
    auth_type: bearer_token
  "bad name":
    url: https://x.example/mcp
`,
    );
    expect(message).toContain(
      "an MCP server with transport http needs url; it is missing at mcp_servers.nourl.url",
    );
    expect(message).toContain(
      "a stdio MCP server needs command (and args) to start it; it is missing at mcp_servers.nocommand.command",
    );
    expect(message).toMatch(/mcp_servers\.badtransport\.transport .*line 9/);
    expect(message).toMatch(
      /client_secret is not supported by this gateway; OAuth upstreams are not supported/,
    );
    expect(message).toContain(
      "auth_type bearer_token needs auth_value (os.environ/VAR) at mcp_servers.noauth.auth_value",
    );
    expect(message).toContain('MCP server name "bad name" must be');
  });

  it("is empty without the section, and warns about LiteLLM keys it ignores", () => {
    expect(load("model_list: []\n").mcpServers).toEqual([]);
    const config = load(`
mcp_servers:
  a:
    url: https://x.example/mcp
    alias: first
`);
    expect(config.warnings.join("\n")).toMatch(/mcp_servers\.a\.alias .*alias is ignored by this gateway/);
  });
});
