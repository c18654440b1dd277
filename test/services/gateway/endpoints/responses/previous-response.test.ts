/**
 * `previous_response_id` on the native Responses path continues only a response the caller's key created (the
 * gateway records the owner of every response id it relays, JSON answers and streams alike): another key's id
 * gets OpenAI's 404 `previous_response_not_found` and never reaches the upstream (which would continue any
 * response of its organisation); the owner's goes through as before, and the master key may continue any.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rejectionOf } from "../../../../helpers/rejection.js";
import { KEY_B, type OwnersHarness, startOwnersHarness, streamedId } from "./owners-harness.js";

let harness: OwnersHarness;

beforeAll(async () => {
  harness = await startOwnersHarness();
});
afterAll(() => harness?.close());

describe("previous_response_id: only the owner continues a response", () => {
  it("key B continuing key A's response: OpenAI's 404, and the upstream never sees the request", async () => {
    const { a, b, upstream } = harness;
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
    const { a, gw, upstream } = harness;
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

  it("key A continuing its own responses (answered as JSON, or streamed) goes through; so does the master key", async () => {
    const { a, master, upstream } = harness;
    const json = (await a.responses.create({ model: "general", input: "remember 7" })).id;
    const streamed = await streamedId(a, "remember 8");
    for (const [client, previous] of [
      [a, json],
      [a, streamed],
      [master, json],
    ] as const) {
      const next = await client.responses.create({
        model: "general",
        input: "which?",
        previous_response_id: previous,
      });
      expect(next.previous_response_id).toBe(previous);
      expect(upstream.requests.at(-1)?.body?.previous_response_id).toBe(previous);
    }
  });

  it("a response B created by continuing is B's: A cannot continue it either", async () => {
    const { a, b, upstream } = harness;
    const own = await b.responses.create({ model: "general", input: "B's own" });
    const before = upstream.requests.length;
    await rejectionOf(
      a.responses.create({ model: "general", input: "peek", previous_response_id: own.id }),
      OpenAI.NotFoundError,
    );
    expect(upstream.requests.length).toBe(before);
  });
});

describe("background responses on a native upstream", () => {
  it("are refused with a 400 naming background, before anything goes upstream", async () => {
    const before = harness.upstream.requests.length;
    const refused = await rejectionOf(
      harness.a.responses.create({ model: "general", input: "later", background: true }),
      OpenAI.BadRequestError,
    );
    expect(refused.param).toBe("background");
    expect(harness.upstream.requests.length).toBe(before);
  });
});
