/**
 * The trace of a response cache hit, through a real gateway (in-process cache) into the Langfuse contract fake:
 * its generation records the output the client received (JSON and streamed replays alike), says it was a hit
 * (`cache_hit` tag and generation metadata) and costs $0.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeLangfuse } from "../../../fixtures/langfuse.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { deployment, MASTER_KEY, type TestGateway } from "../../../helpers/gateway.js";
import { startTracedGateway, type TracedGateway } from "../../../helpers/traced-gateway.js";
import { PRICED } from "./harness.js";

let upstream: FakeUpstream;
let traced: TracedGateway;
let langfuse: FakeLangfuse;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  const config = [
    "model_list:",
    deployment("general", upstream.url, PRICED),
    "litellm_settings:",
    "  cache: true",
    "  cache_params:",
    "    type: local",
    "",
  ].join("\n");
  traced = await startTracedGateway(config);
  ({ gw, langfuse } = traced);
});
afterAll(async () => {
  await traced?.close();
  await upstream?.close();
});

const chat = (content: string, stream = false) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "general", messages: [{ role: "user", content }], stream }),
  });

/** The generation and root observations of the trace `response` names. */
async function traceOf(response: Response) {
  const obs = await langfuse.waitForTrace(response.headers.get("x-trace-id") as string, 2, 10_000);
  return {
    generation: obs.find((o) => o.type === "GENERATION"),
    root: obs.find((o) => o.parentObservationId === null),
  };
}

describe("the trace of a cache hit", () => {
  it("records the replayed answer as its output and says it was a hit, at $0", async () => {
    const miss = await chat("Trace my cached question");
    const answered = (await miss.json()) as { choices: Array<{ message: unknown }> };
    const missTrace = await traceOf(miss);
    expect(missTrace.generation?.metadata).toMatchObject({ cache_hit: false });
    expect(missTrace.root?.tags).not.toContain("cache_hit");

    const before = upstream.completions;
    const hit = await chat("Trace my cached question");
    expect(hit.status).toBe(200);
    await hit.arrayBuffer();
    expect(upstream.completions).toBe(before);
    const { generation, root } = await traceOf(hit);
    expect(generation?.output).toEqual(answered.choices[0]?.message);
    expect(generation?.metadata).toMatchObject({ cache_hit: true });
    expect(generation?.totalCost ?? 0).toBe(0);
    expect(root?.tags).toContain("cache_hit");
  });

  it("records the output of a hit replayed as a stream", async () => {
    const first = (await (await chat("Trace my streamed hit")).json()) as {
      choices: Array<{ message: { content: string } }>;
    };
    const hit = await chat("Trace my streamed hit", true);
    expect(hit.headers.get("content-type")).toContain("text/event-stream");
    await hit.arrayBuffer();
    const { generation } = await traceOf(hit);
    expect(generation?.output).toMatchObject({ content: first.choices[0]?.message.content });
    expect(generation?.metadata).toMatchObject({ cache_hit: true, stream: true });
  });
});
