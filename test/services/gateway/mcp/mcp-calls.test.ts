/**
 * Every tools/call through `/mcp` is a call like a model call (Postgres, Redis, the gateway in process, an SDK
 * server upstream): it counts against the key's rpm, the input guardrails read its arguments (PII masked
 * before the upstream sees it, a card number blocked), the output guard reads its result, it is booked in the
 * spend log (`call_type` `call_mcp_tool`, the server's cost per query) and counted in the metrics by server and
 * tool.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { mcpError, useMcpTestGateway } from "../../../helpers/mcp-gateway.js";

const GRANT = { mcp_servers: ["tools"] };

const t = useMcpTestGateway(
  (url) => `model_list: []
mcp_servers:
  tools:
    url: ${url}
    mcp_info:
      mcp_server_cost_info: {default_cost_per_query: 0.01, tool_name_to_cost_per_query: {add: 0.002}}
`,
  {
    name: "mcp-calls",
    // Every other test here refuses fewer tool calls of one key than this.
    env: { GATEWAY_REFUSAL_ROWS_PER_KEY_PER_MINUTE: "3" },
    policy: `guardrails:
  pii:
    mode: enforce
    scope: both
    entities: {EMAIL_ADDRESS: MASK, CREDIT_CARD: BLOCK}
`,
  },
);

async function connectWith(body: Record<string, unknown>): Promise<{ client: Client; hash: string }> {
  const { key, token } = await t.newKey(body);
  return { client: await t.connect(key), hash: token };
}

describe("a tools/call through /mcp", () => {
  it("is counted against the key's rpm_limit: the call over it is refused and never reaches the upstream", async () => {
    const { client } = await connectWith({ object_permission: GRANT, rpm_limit: 2 });
    await client.callTool({ name: "tools-add", arguments: { a: 1, b: 1 } });
    await client.callTool({ name: "tools-add", arguments: { a: 1, b: 2 } });
    const before = t.upstream.log.calls.length;
    const refused = await mcpError(client.callTool({ name: "tools-add", arguments: { a: 1, b: 3 } }));
    expect(refused.code).toBe(-32003);
    expect(refused.data).toMatchObject({ status: 429, type: "rate_limit_error" });
    expect(t.upstream.log.calls.length).toBe(before);
    // Listing is not a call: it still answers.
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it("adds at most GATEWAY_REFUSAL_ROWS_PER_KEY_PER_MINUTE rows of refused calls a minute, like a model call", async () => {
    const { client, hash } = await connectWith({ object_permission: GRANT, rpm_limit: 1 });
    await client.callTool({ name: "tools-add", arguments: { a: 2, b: 2 } });
    for (let i = 0; i < 6; i++) {
      const refused = await mcpError(client.callTool({ name: "tools-add", arguments: { a: 2, b: i } }));
      expect(refused.data).toMatchObject({ status: 429 });
    }
    const rows = async () => {
      const sql = new pg.Client({ connectionString: t.db?.url });
      await sql.connect();
      try {
        const result = await sql.query<{ status: number }>(
          "SELECT status FROM spend_logs WHERE api_key = $1",
          [hash],
        );
        return result.rows.map((r) => r.status).sort();
      } finally {
        await sql.end();
      }
    };
    await expect.poll(rows, { timeout: 5000 }).toEqual([200, 429, 429, 429]);
    await new Promise((resolve) => setTimeout(resolve, 500)); // a later flush adds nothing
    expect(await rows()).toEqual([200, 429, 429, 429]);
  });

  it("masks PII in the arguments before the upstream sees them, and in the result before the caller does", async () => {
    const { client } = await connectWith({ object_permission: GRANT });
    const echoed = await client.callTool({
      name: "tools-echo",
      arguments: { text: "mail jane.doe@example.com" },
    });
    const seen = t.upstream.log.calls.at(-1);
    expect(seen?.arguments).toEqual({ text: "mail <EMAIL_ADDRESS>" });
    expect(echoed.content).toEqual([{ type: "text", text: "Echo: mail <EMAIL_ADDRESS>" }]);
    const contact = await client.callTool({ name: "tools-contact", arguments: {} });
    expect(contact.content).toEqual([{ type: "text", text: "Write to <EMAIL_ADDRESS> for access." }]);
  });

  it("blocks arguments holding a card number without calling the upstream", async () => {
    const { client } = await connectWith({ object_permission: GRANT });
    const before = t.upstream.log.calls.length;
    const blocked = await mcpError(
      client.callTool({ name: "tools-echo", arguments: { text: "card 4111 1111 1111 1111" } }),
    );
    expect(blocked.code).toBe(-32003);
    expect(blocked.message).toContain("Blocked PII entity detected: CREDIT_CARD");
    expect(t.upstream.log.calls.length).toBe(before);
  });

  it("writes a spend-log row per call at the server's cost per query, and counts it by server and tool", async () => {
    const { client, hash } = await connectWith({ object_permission: GRANT });
    await client.callTool({ name: "tools-echo", arguments: { text: "one" } });
    await client.callTool({ name: "tools-add", arguments: { a: 2, b: 2 } });
    await client.callTool({ name: "tools-fail", arguments: {} });
    await t.gw.gateway.store?.spend.flush(5000);
    const pool = new pg.Pool({ connectionString: t.db?.url });
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
    const metrics = await (await fetch(`${t.gw.url}/metrics`)).text();
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
