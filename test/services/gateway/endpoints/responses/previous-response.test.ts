/**
 * `previous_response_id` on the native Responses path continues only a response the caller's key created (the
 * gateway records the owner of every response id it relays, JSON answers and streams alike): another key's id
 * gets OpenAI's 404 `previous_response_not_found` and never reaches the upstream (which would continue any
 * response of its organisation); the owner's goes through as before; the master key may continue any.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FakeResponsesUpstream,
  startFakeResponsesUpstream,
} from "../../../../fixtures/openai-responses.js";
import { rejectionOf } from "../../../../helpers/rejection.js";
import { type ChatHarness, startChatHarness, VIRTUAL_KEY } from "../chat-completions/harness.js";

const KEY_B = "sk-virtual-other-owner";
const MASTER = "sk-master-previous-test";

let upstream: FakeResponsesUpstream;
let gw: ChatHarness;
let a: OpenAI;
let b: OpenAI;

beforeAll(async () => {
  upstream = await startFakeResponsesUpstream();
  gw = await startChatHarness({
    upstreamUrl: upstream.url,
    extraParams: '    model_info:\n      supported_endpoints: ["/v1/responses"]\n',
    moreKeys: { [KEY_B]: "b".repeat(64) },
    masterKey: MASTER,
  });
  a = new OpenAI({ apiKey: VIRTUAL_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  b = new OpenAI({ apiKey: KEY_B, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

/** The id of a streamed response (read from its `response.completed` event). */
async function streamedId(client: OpenAI, input: string): Promise<string> {
  const stream = await client.responses.create({ model: "general", input, stream: true });
  let id = "";
  for await (const event of stream) if (event.type === "response.completed") id = event.response.id;
  return id;
}

describe("previous_response_id: only the owner continues a response", () => {
  it("key B continuing key A's response: OpenAI's 404, and the upstream never sees the request", async () => {
    const first = await a.responses.create({ model: "general", input: "A's secret context" });
    const before = upstream.requests.length;
    const error = await rejectionOf(
      b.responses.create({ model: "general", input: "what did A say?", previous_response_id: first.id }),
      OpenAI.NotFoundError,
    );
    expect(error.error).toEqual({
      message: `Previous response with id '${first.id}' not found.`,
      type: "invalid_request_error",
      param: "previous_response_id",
      code: "previous_response_not_found",
    });
    expect(upstream.requests.length).toBe(before);
  });

  it("the same for a streamed request, and for a response A streamed", async () => {
    const id = await streamedId(a, "A streams");
    const before = upstream.requests.length;
    const response = await fetch(`${gw.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY_B}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "general", input: "go on", previous_response_id: id, stream: true }),
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: "previous_response_not_found" } });
    expect(upstream.requests.length).toBe(before);
  });

  it("key A continuing its own response (JSON or streamed) goes through to the upstream", async () => {
    const first = await a.responses.create({ model: "general", input: "remember 7" });
    const second = await a.responses.create({
      model: "general",
      input: "what number?",
      previous_response_id: first.id,
    });
    expect(second.previous_response_id).toBe(first.id);
    expect(upstream.requests.at(-1)?.body?.previous_response_id).toBe(first.id);
    const streamed = await streamedId(a, "streamed first");
    const third = await a.responses.create({
      model: "general",
      input: "and?",
      previous_response_id: streamed,
    });
    expect(third.previous_response_id).toBe(streamed);
  });

  it("a response B created by continuing is B's: A cannot continue it either", async () => {
    const own = await b.responses.create({ model: "general", input: "B's own" });
    const before = upstream.requests.length;
    await rejectionOf(
      a.responses.create({ model: "general", input: "peek", previous_response_id: own.id }),
      OpenAI.NotFoundError,
    );
    expect(upstream.requests.length).toBe(before);
  });

  it("the master key may continue any key's response", async () => {
    const first = await a.responses.create({ model: "general", input: "for the admin" });
    const master = new OpenAI({ apiKey: MASTER, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const next = await master.responses.create({
      model: "general",
      input: "continue",
      previous_response_id: first.id,
    });
    expect(next.previous_response_id).toBe(first.id);
  });
});
