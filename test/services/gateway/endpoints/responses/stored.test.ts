/**
 * The gateway keeps no responses: `GET`/`DELETE /v1/responses/{id}` (and `/cancel`, `/input_items`) get a clear
 * OpenAI-shaped 404 saying so, with the key checked first, and nothing goes upstream, even for a model whose
 * upstream serves (and stores) responses natively.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FakeResponsesUpstream,
  startFakeResponsesUpstream,
} from "../../../../fixtures/openai-responses.js";
import { rejectionOf } from "../../../../helpers/rejection.js";
import { type ChatHarness, startChatHarness, VIRTUAL_KEY } from "../chat-completions/harness.js";

let upstream: FakeResponsesUpstream;
let gw: ChatHarness;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeResponsesUpstream();
  gw = await startChatHarness({
    upstreamUrl: upstream.url,
    extraParams: '    model_info:\n      supported_endpoints: ["/v1/responses"]\n',
  });
  client = new OpenAI({ apiKey: VIRTUAL_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

describe("stored responses", () => {
  it("GET of a response the upstream stored: 404 response_not_stored, saying the gateway keeps none", async () => {
    const created = await client.responses.create({ model: "general", input: "keep me", store: true });
    const requests = upstream.requests.length;
    const error = await rejectionOf(client.responses.retrieve(created.id), OpenAI.NotFoundError);
    const body = error.error as Record<string, unknown>;
    expect(body).toMatchObject({
      type: "invalid_request_error",
      param: "response_id",
      code: "response_not_stored",
    });
    expect(String(body.message)).toContain(created.id);
    expect(String(body.message)).toMatch(/keeps no responses.*previous_response_id/);
    expect(upstream.requests.length).toBe(requests);
  });

  it.each([
    ["DELETE", "/v1/responses/resp_1"],
    ["GET", "/responses/resp_1"],
    ["GET", "/v1/responses/resp_1/input_items"],
    ["POST", "/v1/responses/resp_1/cancel"],
  ])("%s %s: the same 404", async (method, path) => {
    const response = await fetch(`${gw.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${VIRTUAL_KEY}` },
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: "response_not_stored" } });
  });

  it("checks the key first", async () => {
    const response = await fetch(`${gw.url}/v1/responses/resp_1`);
    expect(response.status).toBe(401);
  });
});
