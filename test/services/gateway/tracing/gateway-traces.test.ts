/**
 * Traces of real calls through a real gateway (fastify, the chat steps, the official `openai` client) into
 * the Langfuse contract fake: a completion, a stream, a refusal, an upstream failure; the id in `x-trace-id`;
 * the cost on the trace equal to `x-litellm-response-cost`; each endpoint's trace named for it, with its cost
 * and usage.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeLangfuse } from "../../../fixtures/langfuse.js";
import {
  type FakeEmbeddingsCompletions,
  startFakeEmbeddingsCompletions,
} from "../../../fixtures/openai-embeddings-completions.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { deployment, MASTER_KEY, type TestGateway } from "../../../helpers/gateway.js";
import { startTracedGateway, type TracedGateway } from "../../../helpers/traced-gateway.js";

let upstream: FakeUpstream;
let apis: FakeEmbeddingsCompletions;
let traced: TracedGateway;
let langfuse: FakeLangfuse;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  apis = await startFakeEmbeddingsCompletions();
  const priced = "      input_cost_per_token: 0.000001\n      output_cost_per_token: 0.000002\n";
  const config = [
    "model_list:",
    deployment("general", upstream.url, priced),
    deployment("embed-small", apis.url, priced),
    deployment("instruct", apis.url, priced),
  ].join("\n");
  traced = await startTracedGateway(config);
  ({ gw, langfuse } = traced);
});

afterAll(async () => {
  await traced?.close();
  await upstream?.close();
  await apis?.close();
});

/** One chat call with the master key by plain fetch (so an error answer's headers can be read); the response. */
function rawChat(model: string, content: string): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content }] }),
  });
}

describe("a trace per call on every endpoint, named for it", () => {
  const chat = [{ role: "user", content: "name me" }];
  it.each([
    ["/v1/chat/completions", "chat.completions", "chat general", { model: "general", messages: chat }],
    ["/v1/responses", "responses", "chat general", { model: "general", input: "name me" }],
    ["/v1/embeddings", "embeddings", "embeddings embed-small", { model: "embed-small", input: "name me" }],
    ["/v1/completions", "completions", "text_completion instruct", { model: "instruct", prompt: "name me" }],
    [
      "/v1/messages",
      "anthropic.messages",
      "chat general",
      { model: "general", max_tokens: 16, messages: chat },
    ],
  ])(
    "%s: trace %s, generation %s, with the call's cost and usage",
    async (path, name, generationName, body) => {
      const response = await fetch(`${gw.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      const obs = await langfuse.waitForTrace(response.headers.get("x-trace-id") as string, 2, 10_000);
      const root = obs.find((o) => o.parentObservationId === null);
      expect(root?.name).toBe(name);
      expect(root?.traceName).toBe(name);
      const generation = obs.find((o) => o.type === "GENERATION");
      expect(generation?.name).toBe(generationName);
      expect(generation?.totalCost).toBe(Number(response.headers.get("x-litellm-response-cost")));
      expect(generation?.totalCost).toBeGreaterThan(0);
      expect(generation?.usageDetails.input).toBeGreaterThan(0);
      expect(generation?.usageDetails.total).toBe(
        (generation?.usageDetails.input ?? 0) + (generation?.usageDetails.output ?? 0),
      );
    },
  );
});

describe("a trace per chat call", () => {
  it("a completion: one export within 10 s carrying model, usage and the header's cost; x-trace-id names it", async () => {
    const { data, response } = await gw.client.chat.completions
      .create({ model: "general", messages: [{ role: "user", content: "Hello trace" }], temperature: 0.3 })
      .withResponse();
    const traceId = response.headers.get("x-trace-id");
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).toBe(response.headers.get("x-request-id")?.replaceAll("-", ""));
    const obs = await langfuse.waitForTrace(traceId as string, 2, 10_000);
    const generation = obs.find((o) => o.type === "GENERATION");
    expect(generation?.providedModelName).toBe("openai/fake-model");
    expect(generation?.usageDetails).toEqual({
      input: data.usage?.prompt_tokens,
      output: data.usage?.completion_tokens,
      total: data.usage?.total_tokens,
    });
    expect(generation?.totalCost).toBe(Number(response.headers.get("x-litellm-response-cost")));
    expect(generation?.totalCost).toBeGreaterThan(0);
    expect(generation?.modelParameters).toMatchObject({ temperature: 0.3 });
    expect(JSON.stringify(generation?.input)).toContain("Hello trace");
    expect(generation?.output).toMatchObject({ role: "assistant", content: "You said: Hello trace" });
    expect(generation?.completionStartTime).not.toBeNull();
    const root = obs.find((o) => o.parentObservationId === null);
    expect(root?.tags).toEqual(["general"]);
  });

  it("a stream: time to first token, usage from the stream, the streamed text, the session header", async () => {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${MASTER_KEY}`,
        "content-type": "application/json",
        "x-session-id": "conv-42",
      },
      body: JSON.stringify({
        model: "general",
        stream: true,
        messages: [{ role: "user", content: "stream me" }],
      }),
    });
    const traceId = response.headers.get("x-trace-id") as string;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    await response.text();
    const obs = await langfuse.waitForTrace(traceId, 2, 10_000);
    const generation = obs.find((o) => o.type === "GENERATION");
    expect(generation?.timeToFirstToken).not.toBeNull();
    expect(generation?.usageDetails.input).toBeGreaterThan(0);
    expect(generation?.output).toBe("You said: stream me");
    expect(generation?.metadata).toMatchObject({ stream: true });
    expect(obs.find((o) => o.parentObservationId === null)?.sessionId).toBe("conv-42");
  });

  it("a refusal (unknown model): a trace at level WARNING with the status, and x-trace-id on the error", async () => {
    const response = await rawChat("nope", "hi");
    expect(response.status).toBe(400);
    const traceId = response.headers.get("x-trace-id") as string;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const obs = await langfuse.waitForTrace(traceId, 2, 10_000);
    const root = obs.find((o) => o.parentObservationId === null);
    expect(root?.level).toBe("WARNING");
    expect(root?.metadata).toMatchObject({ status_code: 400, requested_model: "unknown" });
  });

  it("an upstream failure: level ERROR, status 502", async () => {
    upstream.failNext(10, 500);
    const response = await rawChat("general", "fail");
    expect(response.status).toBeGreaterThanOrEqual(500);
    expect(response.status).toBe(502);
    const traceId = response.headers.get("x-trace-id") as string;
    const obs = await langfuse.waitForTrace(traceId, 2, 10_000);
    const generation = obs.find((o) => o.type === "GENERATION");
    expect(generation?.level).toBe("ERROR");
    expect(generation?.metadata).toMatchObject({ status_code: response.status });
  });
});
