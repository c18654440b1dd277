/**
 * Upstream credentials stay out of what callers get and what the gateway logs, even when the upstream fails
 * and the SDK's error text would carry its URL (a token in its query string) or a stdio server prints one.
 */
import { describe, expect, it } from "vitest";
import { MASTER_KEY } from "../../../helpers/gateway.js";
import { useMcpTestGateway } from "../../../helpers/mcp-gateway.js";
import { mcpClient } from "../../../helpers/mcp-server.js";
import { captureLogger } from "../../../helpers/redis.js";

const log = captureLogger();
const t = useMcpTestGateway(
  () => `model_list: []
environment_variables: {LEAKY_TOKEN: s3cret-header-value, URL_TOKEN: s3cret-url-value}
mcp_servers:
  leaky:
    url: http://127.0.0.1:9/mcp?token=s3cret-url-value
    auth_type: bearer_token
    auth_value: os.environ/LEAKY_TOKEN
  noisy:
    command: ${process.execPath}
    args: ["-e", "console.error('token=' + process.env.URL_TOKEN); process.exit(1)"]
    env: {URL_TOKEN: os.environ/URL_TOKEN}
`,
  { name: "mcp-secrets", database: false, logger: log },
);

describe("upstream credentials", () => {
  it("appear neither in the caller's errors nor in any log line when the upstream fails", async () => {
    const client = await mcpClient(t.gw.url, { authorization: `Bearer ${MASTER_KEY}` });
    try {
      const errors: string[] = [];
      for (const name of ["leaky-anything", "noisy-anything"]) {
        try {
          await client.callTool({ name, arguments: {} });
        } catch (error) {
          errors.push((error as Error).message);
        }
      }
      expect(errors).toEqual([
        expect.stringContaining("MCP server leaky is unreachable"),
        expect.stringContaining("MCP server noisy is unreachable"),
      ]);
      await client.listTools();
    } finally {
      await client.close();
    }
    const text = log.lines.map((l) => l.text).join("\n");
    expect(text).toContain("mcp_server");
    expect(text).not.toContain("s3cret");
    // An unreachable upstream is a warning, not an error of the gateway.
    expect(log.lines.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
  }, 20_000);
});
