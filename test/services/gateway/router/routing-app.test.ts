/**
 * Routing settings through the whole gateway (buildApp via createGateway, the official openai client, the
 * OpenAI-compatible contract fake as upstreams): a request's tags choose the `npu` deployment, and a model
 * group whose deployments are all at their rpm answers 429 with retry-after.
 */
import { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { deployment, MASTER_KEY, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";

let cpu: FakeUpstream;
let npu: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  [cpu, npu] = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  gw = await startTestGateway(
    [
      "router_settings:",
      "  enable_tag_filtering: true",
      "model_list:",
      deployment("general", cpu.url, "      tags: [default]\n    model_info:\n      id: general-cpu\n"),
      deployment("general", npu.url, "    model_info:\n      id: general-npu\n      tags: [npu]\n"),
      deployment("limited", cpu.url, "      rpm: 2\n"),
    ].join("\n"),
    {},
    // a clock 30 s into a minute that never turns: the rpm window cannot reset between calls (a plain
    // object: the chat route passes `clock.now` on unbound)
    { clock: { now: () => Date.UTC(2026, 0, 1, 0, 0, 30) } },
  );
});
afterAll(async () => {
  await gw.close();
  await Promise.all([cpu.close(), npu.close()]);
});

describe("routing settings through the gateway", () => {
  it("sends a request tagged npu to the npu deployment, untagged ones to the default one", async () => {
    const ask = { model: "general", messages: [{ role: "user" as const, content: "where?" }] };
    for (let i = 0; i < 3; i++) {
      const { response } = await gw.client.chat.completions
        .create({ ...ask, tags: ["npu"] } as typeof ask)
        .withResponse();
      expect(response.headers.get("x-litellm-model-id")).toBe("general-npu");
    }
    const { response } = await gw.client.chat.completions.create(ask).withResponse();
    expect(response.headers.get("x-litellm-model-id")).toBe("general-cpu");
    expect(npu.requests).toHaveLength(3);
    expect(npu.requests.every((r) => !("tags" in (r.body ?? {})))).toBe(true);
  });

  it("streams to the tagged deployment too", async () => {
    const before = { cpu: cpu.requests.length, npu: npu.requests.length };
    for (let i = 0; i < 4; i++) {
      // OpenAI's `metadata` is a map of strings, so LiteLLM's metadata.tags can be one tag as a string
      const stream = await gw.client.chat.completions.create({
        model: "general",
        messages: [{ role: "user", content: "stream" }],
        stream: true,
        metadata: { tags: "npu" },
      });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      expect(text).toBe("You said: stream");
    }
    expect(npu.requests.length - before.npu).toBe(4);
    expect(cpu.requests.length - before.cpu).toBe(0);
    expect(npu.requests.at(-1)?.body).toMatchObject({ stream: true });
  });

  it("answers 400 naming the tags when no deployment carries them", async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "general", messages: [{ role: "user", content: "x" }], tags: ["gpu"] }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; param: string; message: string } };
    expect(body.error).toMatchObject({ code: "no_deployments_with_tag_routing", param: "tags" });
    expect(body.error.message).toContain("model=general");
  });

  it("answers 429 with retry-after once the group's deployments reach their rpm", async () => {
    const ask = { model: "limited", messages: [{ role: "user" as const, content: "again" }] };
    await gw.client.chat.completions.create(ask);
    await gw.client.chat.completions.create(ask);
    const error = await gw.client.chat.completions.create(ask).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(APIError);
    const apiError = error as APIError;
    expect(apiError.status).toBe(429);
    expect(apiError.message).toContain("No deployments available for selected model=limited");
    expect(apiError.headers?.get("retry-after")).toBe("30");
  });
});
