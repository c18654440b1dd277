/**
 * Every tools/call through `/mcp` is a call like a model call (Postgres, Redis, the gateway in process, an SDK
 * server upstream): it counts against the key's rpm, the input guardrails read its arguments (PII masked
 * before the upstream sees it, a card number blocked), the output guard reads its result, it is booked in the
 * spend log (`call_type` `call_mcp_tool`, the server's cost per query) and counted in the metrics by server and
 * tool.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";
import { mcpClient, startMcpServer, type TestMcpServer } from "../../../helpers/mcp-server.js";
import { createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../../../helpers/redis.js";

const POLICY = `guardrails:
  pii:
    mode: enforce
    scope: both
    entities: {EMAIL_ADDRESS: MASK, CREDIT_CARD: BLOCK}
`;
const GRANT = { mcp_servers: ["tools"] };

let upstream: TestMcpServer;
let db: TestDatabase;
let gw: TestGateway;
const prefix = uniquePrefix("mcp-calls");
const clients: Client[] = [];

beforeAll(async () => {
  upstream = await startMcpServer();
  db = await createTestDatabase();
  const policyPath = join(mkdtempSync(join(tmpdir(), "gw-mcp-policy-")), "policy.yaml");
  writeFileSync(policyPath, POLICY);
  delete process.env.PII_ANALYZER_API_BASE;
  gw = await startTestGateway(
    `model_list: []
mcp_servers:
  tools:
    url: ${upstream.url}
    mcp_info:
      mcp_server_cost_info: {default_cost_per_query: 0.01, tool_name_to_cost_per_query: {add: 0.002}}
`,
    { DATABASE_URL: db.url, REDIS_URL, GATEWAY_REDIS_KEY_PREFIX: prefix, GUARDRAIL_POLICY: policyPath },
  );
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await gw?.close();
  await upstream?.close();
  await db?.drop();
  await deleteKeys(prefix);
});

async function connectWith(body: Record<string, unknown>): Promise<{ client: Client; hash: string }> {
  const res = await adminCall<{ key: string; token: string }>(gw, "POST", "/key/generate", body);
  expect(res.status).toBe(200);
  const client = await mcpClient(gw.url, { authorization: `Bearer ${res.body.key}` });
  clients.push(client);
  return { client, hash: res.body.token };
}

/** The JSON-RPC error a promise rejects with. */
async function mcpError(call: Promise<unknown>): Promise<McpError> {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(McpError);
    return error as McpError;
  }
  throw new Error("expected the call to fail");
}

describe("a tools/call through /mcp", () => {
  it("is counted against the key's rpm_limit: the call over it is refused and never reaches the upstream", async () => {
    const { client } = await connectWith({ object_permission: GRANT, rpm_limit: 2 });
    await client.callTool({ name: "tools-add", arguments: { a: 1, b: 1 } });
    await client.callTool({ name: "tools-add", arguments: { a: 1, b: 2 } });
    const before = upstream.log.calls.length;
    const refused = await mcpError(client.callTool({ name: "tools-add", arguments: { a: 1, b: 3 } }));
    expect(refused.code).toBe(-32003);
    expect(refused.data).toMatchObject({ status: 429, type: "rate_limit_error" });
    expect(upstream.log.calls.length).toBe(before);
    // Listing is not a call: it still answers.
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it("masks PII in the arguments before the upstream sees them, and in the result before the caller does", async () => {
    const { client } = await connectWith({ object_permission: GRANT });
    const echoed = await client.callTool({
      name: "tools-echo",
      arguments: { text: "mail jane.doe@example.com" },
    });
    const seen = upstream.log.calls.at(-1);
    expect(seen?.arguments).toEqual({ text: "mail <EMAIL_ADDRESS>" });
    expect(echoed.content).toEqual([{ type: "text", text: "Echo: mail <EMAIL_ADDRESS>" }]);
    const contact = await client.callTool({ name: "tools-contact", arguments: {} });
    expect(contact.content).toEqual([{ type: "text", text: "Write to <EMAIL_ADDRESS> for access." }]);
  });

  it("blocks arguments holding a card number without calling the upstream", async () => {
    const { client } = await connectWith({ object_permission: GRANT });
    const before = upstream.log.calls.length;
    const blocked = await mcpError(
      client.callTool({ name: "tools-echo", arguments: { text: "card 4111 1111 1111 1111" } }),
    );
    expect(blocked.code).toBe(-32003);
    expect(blocked.message).toContain("Blocked PII entity detected: CREDIT_CARD");
    expect(upstream.log.calls.length).toBe(before);
  });

  it("writes a spend-log row per call at the server's cost per query, and counts it by server and tool", async () => {
    const { client, hash } = await connectWith({ object_permission: GRANT });
    await client.callTool({ name: "tools-echo", arguments: { text: "one" } });
    await client.callTool({ name: "tools-add", arguments: { a: 2, b: 2 } });
    await client.callTool({ name: "tools-fail", arguments: {} });
    await gw.gateway.store?.spend.flush(5000);
    const pool = new pg.Pool({ connectionString: db.url });
    try {
      const { rows } = await pool.query(
        "SELECT model_group, model, call_type, spend::float8 AS spend, status FROM spend_logs WHERE api_key = $1 ORDER BY model",
        [hash],
      );
      expect(rows).toEqual([
        { model_group: "tools", model: "tools-add", call_type: "call_mcp_tool", spend: 0.002, status: 200 },
        { model_group: "tools", model: "tools-echo", call_type: "call_mcp_tool", spend: 0.01, status: 200 },
        { model_group: "tools", model: "tools-fail", call_type: "call_mcp_tool", spend: 0.01, status: 200 },
      ]);
    } finally {
      await pool.end();
    }
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(
      /gateway_mcp_tool_calls_total\{mcp_server="tools",tool="fail",status="tool_error"\} 1/,
    );
    expect(metrics).toMatch(
      /gateway_mcp_tool_calls_total\{mcp_server="tools",tool="echo",status="blocked"\} 1/,
    );
    expect(metrics).toMatch(
      /gateway_mcp_tool_call_duration_seconds_count\{mcp_server="tools",tool="add"\} [1-9]/,
    );
    expect(metrics).not.toContain('tool="nope"');
  });
});
