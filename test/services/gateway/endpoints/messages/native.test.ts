/**
 * `POST /v1/messages` on an `anthropic/` deployment: the body goes to the upstream's own `/v1/messages` with
 * `x-api-key` and `anthropic-version`, the Message comes back as the upstream wrote it, and its usage
 * (`input_tokens` / `output_tokens`) is what the key is charged for.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type AnthropicLite, startAnthropicLite } from "../../../../fixtures/anthropic-messages-lite.js";
import {
  type ChatHarness,
  rowsRecorder,
  startChatHarness,
  VIRTUAL_KEY,
} from "../chat-completions/harness.js";

let upstream: AnthropicLite;
let h: ChatHarness;
const spend = rowsRecorder();

beforeAll(async () => {
  upstream = await startAnthropicLite("sk-ant-upstream");
  h = await startChatHarness({
    upstreamUrl: upstream.url,
    upstreamModel: "anthropic/claude-lite",
    extraParams: "      api_key: sk-ant-upstream\n",
    spend,
  });
});
afterAll(async () => {
  await h?.close();
  await upstream?.close();
});

it("passes the Message through natively and books the upstream's usage", async () => {
  const client = new Anthropic({ baseURL: h.url, apiKey: VIRTUAL_KEY, maxRetries: 0 });
  const message = await client.messages.create({
    model: "general",
    max_tokens: 32,
    stop_sequences: ["END"],
    messages: [{ role: "user", content: "hi native" }],
  });
  expect(message).toMatchObject({
    id: "msg_lite_1",
    content: [{ type: "text", text: "Native: hi native" }],
    usage: { input_tokens: 11, output_tokens: 7 },
  });
  const sent = upstream.requests[0]!;
  expect(sent.path).toBe("/v1/messages");
  expect(sent.headers["anthropic-version"]).toBe("2023-06-01");
  expect(sent.headers.authorization).toBeUndefined();
  // Native: the client's fields as they were (stop_sequences not renamed to stop), the deployment's model name.
  expect(sent.body).toEqual({
    model: "claude-lite",
    max_tokens: 32,
    stop_sequences: ["END"],
    messages: [{ role: "user", content: "hi native" }],
  });
  await expect.poll(() => spend.rows.length).toBe(1);
  expect(spend.rows[0]!.callType).toBe("anthropic_messages");
  expect(spend.rows[0]!.spend).toBeCloseTo(18 * 0.00001, 10);
});
