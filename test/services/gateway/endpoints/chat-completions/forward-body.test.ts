/**
 * The upstream request is the client's own JSON text whenever the gateway changes nothing but the model name
 * (and a stream's usage request): byte for byte, with `model` spliced in; a body the text would misstate
 * (a repeated key) or a guard rewrote is serialised as before.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../../../../fixtures/openai-upstream.js";
import { deployment, MASTER_KEY, startTestGateway, type TestGateway } from "../../../../helpers/gateway.js";

let upstream: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gw = await startTestGateway(
    [
      "model_list:",
      deployment("general", upstream.url),
      "  - model_name: fake-model",
      "    litellm_params:",
      "      model: openai/fake-model",
      `      api_base: ${upstream.url}`,
    ].join("\n"),
  );
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
});
afterEach(() => {
  upstream.requests.length = 0;
});

async function post(text: string): Promise<Response> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
    body: text,
  });
  await res.text();
  return res;
}

/** A body as a client might write it: its own key order, spacing, number format and escapes. */
const clientText = (model: string, extra = "") =>
  `{ "messages" : [ {"content": "say \\"hi\\" {model: [x]}", "role":"user",\n "name": "a"} ],\n  "temperature": 1.0, "model":"${model}", "max_tokens": 20, "metadata": {"model": "not this one"}${extra} }\n`;

describe("forwarding the client's JSON text", () => {
  it("sends the client's bytes unchanged when the deployment's model name is the one asked for", async () => {
    const text = clientText("fake-model");
    expect((await post(text)).status).toBe(200);
    expect(upstream.requests[0]?.rawBody).toBe(text);
  });

  it("splices the deployment's model name into the client's text for an alias", async () => {
    const text = clientText("general");
    expect((await post(text)).status).toBe(200);
    expect(upstream.requests[0]?.rawBody).toBe(text.replace('"model":"general"', '"model":"fake-model"'));
  });

  it("adds include_usage as the last member of a stream that did not ask for usage", async () => {
    const text = clientText("general", ', "stream": true');
    expect((await post(text)).status).toBe(200);
    const expected = text
      .replace('"model":"general"', '"model":"fake-model"')
      .replace(/ }\n$/, ' ,"stream_options":{"include_usage":true}}\n');
    expect(upstream.requests[0]?.rawBody).toBe(expected);
    expect(upstream.requests[0]?.body?.stream_options).toEqual({ include_usage: true });
  });

  it("merges include_usage into the client's own stream_options by serialising", async () => {
    const text = clientText("general", ', "stream": true, "stream_options": {"other": 1}');
    expect((await post(text)).status).toBe(200);
    expect(upstream.requests[0]?.body?.stream_options).toEqual({ other: 1, include_usage: true });
  });

  it("serialises a body that repeats a key, so the upstream reads what the gateway checked", async () => {
    for (const text of [
      '{"model":"general","messages":[{"role":"user","content":"hidden","content":"checked"}]}',
      '{"model":"hidden","messages":[{"role":"user","content":"checked"}],"model":"general"}',
    ]) {
      expect((await post(text)).status).toBe(200);
      const sent = upstream.requests.pop();
      expect(sent?.rawBody).not.toContain("hidden");
      expect(sent?.body).toMatchObject({
        model: "fake-model",
        messages: [{ role: "user", content: "checked" }],
      });
    }
  });

  it("drops a byte order mark before the JSON, by serialising", async () => {
    expect((await post(`\ufeff${clientText("fake-model")}`)).status).toBe(200);
    expect(upstream.requests[0]?.rawBody.charCodeAt(0)).toBe("{".charCodeAt(0));
  });

  it("leaves LiteLLM's routing tags out, by serialising", async () => {
    const text = clientText("general", ', "tags": ["free"]');
    expect((await post(text)).status).toBe(200);
    expect(upstream.requests[0]?.body).not.toHaveProperty("tags");
    expect(upstream.requests[0]?.body).toMatchObject({ model: "fake-model", temperature: 1 });
  });

  it("adds no output cap when no budget is in force: the client's body arrives as it was sent, in both paths", async () => {
    const uncapped = (extra = "") =>
      `{"model":"fake-model","messages":[{"role":"user","content":"hi"}]${extra}}`;
    const res = await post(uncapped());
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gateway-output-cap")).toBeNull();
    expect(upstream.requests[0]?.rawBody).toBe(uncapped());
    // Serialised (a stream with its own stream_options): still no cap.
    expect((await post(uncapped(',"stream":true,"stream_options":{"other":1}'))).status).toBe(200);
    expect(upstream.requests[1]?.body).not.toHaveProperty("max_completion_tokens");
    expect(upstream.requests[1]?.body).not.toHaveProperty("max_tokens");
  });
});
