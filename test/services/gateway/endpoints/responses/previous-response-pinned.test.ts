/**
 * `previous_response_id` continues on the deployment that holds the response. A load-balanced alias with two
 * native Responses deployments (two upstream organisations, each holding only its own responses) must send a
 * continuation to the one that created the response, every time, and never fall back to the other (which would
 * answer "not found" or continue nothing). A model routed only to another organisation is told which model can
 * continue it.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FakeResponsesUpstream,
  startFakeResponsesUpstream,
} from "../../../../fixtures/openai-responses.js";
import { rejectionOf } from "../../../../helpers/rejection.js";
import { streamResponse } from "../../../../helpers/responses-stream.js";
import { type ChatHarness, startChatHarness, VIRTUAL_KEY } from "../chat-completions/harness.js";

let east: FakeResponsesUpstream;
let west: FakeResponsesUpstream;
let gw: ChatHarness;
let client: OpenAI;

const native = (name: string, id: string, url: string, key: string) =>
  `  - model_name: ${name}\n    litellm_params:\n      model: openai/fake-model\n      api_base: ${url}\n      api_key: ${key}\n` +
  `    model_info:\n      id: ${id}\n      supported_endpoints: ["/v1/responses"]\n`;

beforeAll(async () => {
  east = await startFakeResponsesUpstream({ idPrefix: "east" });
  west = await startFakeResponsesUpstream({ idPrefix: "west" });
  gw = await startChatHarness({
    upstreamUrl: east.url,
    modelList:
      "model_list:\n" +
      native("general", "east-1", east.url, "sk-east") +
      native("general", "west-1", west.url, "sk-west") +
      native("west-only", "west-2", west.url, "sk-west") +
      native("elsewhere", "north-1", `${west.url}/other`, "sk-north"),
  });
  client = new OpenAI({ apiKey: VIRTUAL_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await east?.close();
  await west?.close();
});

describe("previous_response_id is pinned to the deployment that holds the response", () => {
  it("every continuation of a response goes to the upstream that created it, JSON and streamed", async () => {
    for (let round = 0; round < 12; round++) {
      const first = await client.responses.create({ model: "general", input: `remember ${round}` });
      const holder = east.requests.some((r) => r.body?.input === `remember ${round}`) ? east : west;
      const other = holder === east ? west : east;
      const before = other.requests.length;
      const next = await client.responses.create({
        model: "general",
        input: "which?",
        previous_response_id: first.id,
      });
      expect(next.previous_response_id).toBe(first.id);
      expect(holder.requests.at(-1)?.body?.previous_response_id).toBe(first.id);
      await streamResponse(client, {
        model: "general",
        input: "and streamed?",
        previous_response_id: first.id,
      });
      expect(holder.requests.at(-1)?.body?.previous_response_id).toBe(first.id);
      expect(other.requests.length).toBe(before);
    }
  });

  it("another model of the same upstream organisation continues it there", async () => {
    // A response "general" created at the west organisation (the shuffle picks east or west).
    let first: OpenAI.Responses.Response | undefined;
    for (let i = 0; i < 40 && first === undefined; i++) {
      const created = await client.responses.create({ model: "general", input: `west ${i}` });
      if (west.requests.at(-1)?.body?.input === `west ${i}`) first = created;
    }
    if (first === undefined) throw new Error("40 responses of general, none created at west");
    const next = await client.responses.create({
      model: "west-only",
      input: "go on",
      previous_response_id: first.id,
    });
    expect(next.previous_response_id).toBe(first.id);
    expect(west.requests.at(-1)?.body?.previous_response_id).toBe(first.id);
  });

  it("a model served only by another organisation is a 400 naming the models that can continue it", async () => {
    const first = await client.responses.create({ model: "west-only", input: "held by west" });
    const error = await rejectionOf(
      client.responses.create({ model: "elsewhere", input: "go on", previous_response_id: first.id }),
      OpenAI.BadRequestError,
    );
    expect(error.error).toMatchObject({ type: "invalid_request_error", param: "previous_response_id" });
    expect(error.message).toContain("west-only");
  });
});
