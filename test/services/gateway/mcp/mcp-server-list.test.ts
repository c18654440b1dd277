/**
 * `GET /v1/mcp/server` (LiteLLM's MCP server listing): the master key sees every declared server with its tools
 * under the names callers use (`<server>-<tool>`), its transport and `allow_all_keys`, and never a credential,
 * a header, an env value or a URL's query; a virtual key gets 403. Real upstreams: an SDK server over Streamable
 * HTTP and `@modelcontextprotocol/server-everything` over stdio; Postgres and Redis for the virtual key.
 */
import { createRequire } from "node:module";
import { mcpServerListResponse } from "@platform/admin-api";
import { describe, expect, it } from "vitest";
import { adminCall } from "../../../helpers/gateway.js";
import { useMcpTestGateway } from "../../../helpers/mcp-gateway.js";

const everything = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/server-everything/dist/index.js",
);
const SECRETS = ["upstream-secret-77c1", "query-secret-5e2a", "header-secret-0b9d", "env-secret-a41f"];

interface Listed {
  server_id: string;
  server_name: string;
  transport: string;
  url?: string;
  command?: string;
  allow_all_keys: boolean;
  allowed_tools: string[] | null;
  status: string;
  health_check_error?: string;
  mcp_info: { mcp_server_cost_info: { default_cost_per_query: number } };
  tools: Array<{ name: string; description?: string }>;
}

describe("GET /v1/mcp/server", () => {
  const t = useMcpTestGateway(
    (url) => `model_list: []
environment_variables: {T_TOKEN: ${SECRETS[0]}, T_HEADER: ${SECRETS[2]}, T_ENV: ${SECRETS[3]}}
mcp_servers:
  tools:
    url: ${url}?key=${SECRETS[1]}
    auth_type: bearer_token
    auth_value: os.environ/T_TOKEN
    static_headers: {X-Org: os.environ/T_HEADER}
    allowed_tools: [add, echo]
    description: the test's SDK server
    mcp_info: {mcp_server_cost_info: {default_cost_per_query: 0.002}}
  everything:
    command: ${process.execPath}
    args: ["${everything}", "stdio"]
    env: {EVERYTHING_TOKEN: os.environ/T_ENV}
    allow_all_keys: true
  down:
    url: http://127.0.0.1:9/mcp
`,
    { name: "mcp-server-list" },
  );

  it("lists every declared server in file order with its tools under <server>-<tool>, transport and allow_all_keys", async () => {
    const res = await adminCall<Listed[]>(t.gw, "GET", "/v1/mcp/server");
    expect(res.status).toBe(200);
    expect(mcpServerListResponse.safeParse(res.body).success).toBe(true);
    expect(res.body.map((s) => s.server_name)).toEqual(["tools", "everything", "down"]);
    const [tools, everythingServer, down] = res.body as [Listed, Listed, Listed];

    expect(tools).toMatchObject({
      server_id: "tools",
      transport: "http",
      allow_all_keys: false,
      allowed_tools: ["add", "echo"],
      status: "healthy",
      mcp_info: { mcp_server_cost_info: { default_cost_per_query: 0.002 } },
    });
    expect(tools.tools.map((x) => x.name).sort()).toEqual(["tools-add", "tools-echo"]);
    expect(tools.url).toBe(new URL(t.upstream.url).href.replace(/\?.*$/, ""));

    expect(everythingServer).toMatchObject({ transport: "stdio", allow_all_keys: true, status: "healthy" });
    expect(everythingServer.command).toBe(process.execPath);
    expect(everythingServer.tools.map((x) => x.name)).toEqual(
      expect.arrayContaining(["everything-echo", "everything-get-sum"]),
    );

    expect(down).toMatchObject({ status: "unhealthy", tools: [] });
    expect(down.health_check_error).toBe("MCP server down is unreachable (connect failed).");
  }, 30_000);

  it("never answers a credential, a header, an env value, stdio args or a URL's query", async () => {
    const res = await adminCall(t.gw, "GET", "/v1/mcp/server");
    const text = JSON.stringify(res.body);
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    expect(text).not.toContain(everything);
  }, 30_000);

  it("refuses a virtual key (403) and a request without a key (401)", async () => {
    const { key } = await t.newKey({ object_permission: { mcp_servers: ["tools"] } });
    const virtual = await adminCall(t.gw, "GET", "/v1/mcp/server", undefined, key);
    expect(virtual.status).toBe(403);
    const anonymous = await fetch(`${t.gw.url}/v1/mcp/server`);
    expect(anonymous.status).toBe(401);
  });
});
