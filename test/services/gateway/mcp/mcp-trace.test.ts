/**
 * A trace per tools/call (the gateway in process with tracing on, an SDK server upstream, the Langfuse contract
 * fake): a root span `mcp.tools.call` and a child observation of Langfuse's type `tool` named for the prefixed
 * tool, carrying the arguments as they went upstream (PII masked), the result, the server, the status and the
 * cost; the guardrail's decision as its own observation; a refused call traced too.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeLangfuse, type FakeObservation, startFakeLangfuse } from "../../../fixtures/langfuse.js";
import { MASTER_KEY } from "../../../helpers/gateway.js";
import { useMcpTestGateway } from "../../../helpers/mcp-gateway.js";
import { waitFor } from "../../../helpers/redis.js";
import { langfuseEnv } from "../../../helpers/traced-gateway.js";

let langfuse: FakeLangfuse;
let client: Client;

beforeAll(async () => {
  langfuse = await startFakeLangfuse();
});

afterAll(async () => {
  await langfuse?.close();
});

const stack = useMcpTestGateway(
  (url) => `model_list: []
mcp_servers:
  tools:
    url: ${url}
    mcp_info:
      mcp_server_cost_info: {default_cost_per_query: 0.004}
`,
  {
    name: "mcp-trace",
    database: false,
    policy:
      "guardrails:\n  pii:\n    mode: enforce\n    scope: both\n    entities: {EMAIL_ADDRESS: MASK, CREDIT_CARD: BLOCK}\n",
    get env() {
      // Read once the fake Langfuse has started (the hook above runs first).
      return langfuseEnv(langfuse, 100);
    },
  },
);

beforeAll(async () => {
  client = await stack.connect(MASTER_KEY);
});

/** The observations of the trace whose tool observation `matches`, once `count` of them arrived. */
async function traceOf(matches: (o: FakeObservation) => boolean, count: number): Promise<FakeObservation[]> {
  await waitFor("the tool call's trace", () =>
    langfuse.observations.some((o) => o.type === "TOOL" && matches(o)),
  );
  const tool = langfuse.observations.find((o) => o.type === "TOOL" && matches(o)) as FakeObservation;
  return langfuse.waitForTrace(tool.traceId, count);
}

describe("a trace per tools/call", () => {
  it("records the call as a tool observation under an mcp.tools.call root, with its guardrail decision", async () => {
    await client.callTool({ name: "tools-echo", arguments: { text: "mail jane.doe@example.com" } });
    const observations = await traceOf((o) => o.name === "tools-echo", 3);
    const root = observations.find((o) => o.parentObservationId === null);
    expect(root?.name).toBe("mcp.tools.call");
    expect(root?.traceName).toBe("mcp.tools.call");
    const tool = observations.find((o) => o.type === "TOOL") as FakeObservation;
    expect(tool.parentObservationId).toBe(root?.id);
    expect(tool.metadata).toMatchObject({
      mcp_server: "tools",
      tool: "echo",
      status_code: 200,
      status: "success",
    });
    expect(tool.metadata.cost_usd).toBe(0.004);
    expect(JSON.stringify(tool.input)).toContain("<EMAIL_ADDRESS>");
    expect(JSON.stringify(tool.input)).not.toContain("jane.doe@example.com");
    expect(JSON.stringify(tool.output)).toContain("Echo: mail <EMAIL_ADDRESS>");
    const guardrail = observations.find((o) => o.type === "GUARDRAIL");
    expect(guardrail?.name).toBe("guardrail pii");
    expect(guardrail?.parentObservationId).toBe(root?.id);
  });

  it("traces a blocked call as a warning, without a result", async () => {
    await expect(
      client.callTool({ name: "tools-echo", arguments: { text: "card 4111 1111 1111 1111" } }),
    ).rejects.toThrow(/CREDIT_CARD/);
    const observations = await traceOf((o) => o.name === "tools-echo" && o.metadata.status === "blocked", 3);
    const tool = observations.find((o) => o.type === "TOOL") as FakeObservation;
    expect(tool.level).toBe("WARNING");
    expect(tool.metadata).toMatchObject({ status_code: 400, cost_usd: 0 });
    expect(tool.output ?? null).toBeNull();
  });
});
