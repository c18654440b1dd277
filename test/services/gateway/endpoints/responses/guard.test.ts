/**
 * The guard seam on `/v1/responses` (translated path): the input guard sees the Responses body's texts and its
 * masking reaches the upstream; the output guard reads the `response` object the client gets (its
 * `output_text`), not the upstream's chat completion, and its masking reaches the client.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallGuard } from "../../../../../services/gateway/src/guardrails/types.js";
import { type FakeUpstream, startFakeUpstream } from "../../../../fixtures/openai-upstream.js";
import { openAISchemaErrors } from "../../../../helpers/openapi.js";
import { type ChatHarness, startChatHarness, VIRTUAL_KEY } from "../chat-completions/harness.js";

let upstream: FakeUpstream;
let gw: ChatHarness;
const inputTexts: string[] = [];
const outputTexts: string[] = [];

/** Masks `secret` wherever it reads it, in and out. */
const guard: CallGuard = {
  async checkInput(call, texts) {
    for (const slot of texts(call.body)) {
      inputTexts.push(slot.text);
      if (slot.text.includes("secret")) slot.set(slot.text.replaceAll("secret", "[MASKED]"));
    }
    return { decisions: [], rewritten: true };
  },
  async checkOutput(_call, answer, texts) {
    let rewritten = false;
    for (const slot of texts(answer as Record<string, unknown>)) {
      outputTexts.push(slot.text);
      if (slot.text.includes("MASKED")) {
        slot.set(slot.text.replaceAll("[MASKED]", "[REDACTED]"));
        rewritten = true;
      }
    }
    return { decisions: [], rewritten };
  },
  streamOutput: () => undefined,
};

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gw = await startChatHarness({ upstreamUrl: upstream.url, guard });
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
});

describe("guardrails on /v1/responses", () => {
  it("masks input before the upstream and rewrites the response object's output_text", async () => {
    const client = new OpenAI({ apiKey: VIRTUAL_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const response = await client.responses.create({
      model: "general",
      instructions: "Answer plainly.",
      input: [{ role: "user", content: [{ type: "input_text", text: "my secret plan" }] }],
    });
    // In the body's order (the client sends `input` before `instructions`).
    expect(inputTexts).toEqual(["my secret plan", "Answer plainly."]);
    const sent = upstream.requests.at(-1)?.body as { messages: Array<{ content: unknown }> };
    expect(sent.messages[1]!.content).toEqual([{ type: "text", text: "my [MASKED] plan" }]);
    expect(outputTexts).toEqual(["You said: my [MASKED] plan"]);
    expect(response.output_text).toBe("You said: my [REDACTED] plan");
    expect(openAISchemaErrors("Response", response)).toEqual([]);
  });
});
