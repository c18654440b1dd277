/**
 * The request counters (`litellm_proxy_total_requests_metric_total`, `litellm_proxy_failed_requests_metric_total`)
 * carry LiteLLM's `route` label: the endpoint's canonical path, whichever of its URLs the client used, on
 * answers and refusals alike, on every model endpoint of the assembled gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metricValue } from "../../../helpers/metrics.js";
import { type OpenAIApisGateway, startOpenAIApisGateway } from "../endpoints/openai-apis-gateway.js";

const POLICY = "guardrails:\n  pii:\n    mode: enforce\n    entities: {CREDIT_CARD: BLOCK}\n";

let env: OpenAIApisGateway;
let key: string;

beforeAll(async () => {
  env = await startOpenAIApisGateway(POLICY);
  key = await env.newKey();
});
afterAll(async () => {
  await env?.close();
});

async function post(path: string, body: Record<string, unknown>): Promise<number> {
  const response = await fetch(`${env.gw.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

const counted = (name: string, labels: Record<string, string>) =>
  metricValue(env.gw.gateway.metrics.registry, name, labels);
const TOTAL = "litellm_proxy_total_requests_metric_total";
const FAILED = "litellm_proxy_failed_requests_metric_total";

const chat = { messages: [{ role: "user", content: "hi" }] };
const calls: Array<[string, string, Record<string, unknown>]> = [
  ["/v1/chat/completions", "/v1/chat/completions", { model: "general", ...chat }],
  ["/chat/completions", "/v1/chat/completions", { model: "general", ...chat }],
  ["/v1/responses", "/v1/responses", { model: "general", input: "hi" }],
  ["/responses", "/v1/responses", { model: "general", input: "hi" }],
  ["/v1/embeddings", "/v1/embeddings", { model: "embed-small", input: "hi" }],
  ["/embeddings", "/v1/embeddings", { model: "embed-small", input: "hi" }],
  ["/v1/completions", "/v1/completions", { model: "instruct", prompt: "hi", max_tokens: 3 }],
  ["/v1/messages", "/v1/messages", { model: "general", max_tokens: 16, ...chat }],
];

describe("the route label of the request counters", () => {
  it.each(calls)("a call on %s counts under route %s", async (path, route, body) => {
    const model = String(body.model);
    const before = await counted(TOTAL, { route, requested_model: model, status_code: "200" });
    expect(await post(path, body)).toBe(200);
    await expect
      .poll(() => counted(TOTAL, { route, requested_model: model, status_code: "200" }))
      .toBe(before + 1);
  });

  it("a refusal counts under its endpoint's route in both counters; no other route value appears", async () => {
    expect(await post("/responses", { model: "nosuch", input: "hi" })).toBe(400);
    expect(await post("/v1/messages", { model: "nosuch", max_tokens: 4, ...chat })).toBe(400);
    for (const route of ["/v1/responses", "/v1/messages"]) {
      expect(await counted(TOTAL, { route, requested_model: "unknown", status_code: "400" })).toBe(1);
      expect(await counted(FAILED, { route, requested_model: "unknown", exception_status: "400" })).toBe(1);
    }
    const routes = new Set(
      (await env.gw.gateway.metrics.registry.getSingleMetric(TOTAL)?.get())?.values.map(
        (v) => v.labels.route,
      ),
    );
    expect([...routes].sort()).toEqual([
      "/v1/chat/completions",
      "/v1/completions",
      "/v1/embeddings",
      "/v1/messages",
      "/v1/responses",
    ]);
  });
});
