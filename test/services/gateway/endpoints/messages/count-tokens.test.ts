/**
 * `POST /v1/messages/count_tokens` is passed through to Anthropic deployments (Anthropic's contract fake): the
 * upstream's `{"input_tokens": N}` comes back as it is, with the key's model access checked and nothing booked.
 * (A model served by any other deployment: `translated.test.ts`.)
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeAnthropic, startFakeAnthropic } from "../../../../fixtures/anthropic-messages.js";
import {
  type ChatHarness,
  rowsRecorder,
  startChatHarness,
  VIRTUAL_KEY,
} from "../chat-completions/harness.js";

let anthropic: FakeAnthropic;
let gw: ChatHarness;
let limited: ChatHarness;
const spend = rowsRecorder();

beforeAll(async () => {
  anthropic = await startFakeAnthropic({ apiKey: "sk-ant-upstream" });
  const onAnthropic = {
    upstreamUrl: anthropic.url,
    upstreamModel: "anthropic/claude-haiku-4-5",
    extraParams: "      api_key: sk-ant-upstream\n",
  };
  gw = await startChatHarness({ ...onAnthropic, spend });
  limited = await startChatHarness({ ...onAnthropic, models: ["other"] });
});
afterAll(async () => {
  await Promise.all([gw?.close(), limited?.close()]);
  await anthropic?.close();
});

const count = (on: ChatHarness, body: Record<string, unknown>) =>
  fetch(`${on.url}/v1/messages/count_tokens`, {
    method: "POST",
    headers: {
      "x-api-key": VIRTUAL_KEY,
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
    },
    body: JSON.stringify(body),
  });

const question = {
  model: "general",
  system: "Be brief.",
  messages: [{ role: "user", content: "How many tokens is this?" }],
};

describe("count_tokens", () => {
  it("passes the count through to the Anthropic deployment (the SDK's countTokens) and books nothing", async () => {
    const client = new Anthropic({ baseURL: gw.url, apiKey: VIRTUAL_KEY, maxRetries: 0 });
    const counted = await client.messages.countTokens({
      model: "general",
      system: "Be brief.",
      messages: [{ role: "user", content: "How many tokens is this?" }],
    });
    const sent = anthropic.requests.at(-1)!;
    expect(sent.path).toBe("/v1/messages/count_tokens");
    expect(sent.headers["x-api-key"]).toBe("sk-ant-upstream");
    expect(sent.body).toEqual({ ...question, model: "claude-haiku-4-5" });
    const expected =
      Math.ceil(JSON.stringify(question.messages).length / 4) +
      Math.ceil(JSON.stringify(question.system).length / 4);
    expect(counted).toEqual({ input_tokens: expected });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(spend.rows).toEqual([]);
  });

  it("refuses a key that may not use the model with 403 permission_error, before the upstream", async () => {
    const before = anthropic.requests.length;
    const response = await count(limited, question);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ type: "error", error: { type: "permission_error" } });
    expect(anthropic.requests.length).toBe(before);
  });

  it("answers an upstream's refusal in Anthropic's shape (max_tokens is not a count_tokens field)", async () => {
    const response = await count(gw, { ...question, max_tokens: 10 });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { type: string; error: { type: string; message: string } };
    expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(body.error.message).toContain("max_tokens");
    expect(anthropic.requests.at(-1)?.body).toHaveProperty("max_tokens", 10);
  });
});
